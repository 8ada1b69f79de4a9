// Issue 26: promotion proposes what Git applied, not the live spec. A user who may only `kubectl edit` the
// staging Rollout puts an image there; it finishes a healthy canary; no pull request proposes it to prod,
// even with autoMerge. A Git change afterwards is promoted as before.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { eventually } from '../../support/eventually.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

const EVIL = 'evil.example/evil:latest';

let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

async function stagingHealthyAt(current: PromotionScene, image: string): Promise<boolean> {
  const staging = await liveWebRollout(current.clients, 'staging');
  return (
    staging?.spec.template.spec.containers[0]?.image === image &&
    staging.status?.phase === 'Healthy' &&
    staging.status.stableRS === staging.status.currentPodHash
  );
}

async function refusalEvents(current: PromotionScene): Promise<string[]> {
  const list = toPlainObject<{ items: Array<{ reason?: string; message?: string; type?: string }> }>(
    await current.clients.core.listNamespacedEvent({ namespace: 'staging' }),
  );
  return list.items
    .filter((event) => event.reason === 'PromotionRefused' && event.type === 'Warning')
    .map((event) => event.message ?? '');
}

describe('promotion proposes what Git applied (GitHub, autoMerge)', () => {
  it('a staging Rollout edited in the cluster finishes healthy: no pull request, nothing merged; a Git change is promoted', async () => {
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
      autoMerge: { checksInterval: '1s' },
    });
    const { double, clients } = scene;
    await bothEnvironmentsHealthy(scene);
    const gitCommit = (await double.branchSha(REPO, 'main')) ?? '';

    // What a user bound to `edit` in staging can do: change the live image, never touching Git.
    await clients.custom.patchNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'staging',
      plural: 'rollouts',
      name: 'web',
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: EVIL }],
    });
    await eventually(
      'the edited image finished a healthy canary in staging',
      () => stagingHealthyAt(scene!, EVIL),
      {
        timeoutMs: 30_000,
      },
    );
    // The look at that healthy revision ends in a refusal (or, before the fix, a pull request proposing it).
    await eventually(
      'the promotion looked at the edited revision',
      async () => (await refusalEvents(scene!)).length > 0 || double.repository(REPO).pulls.size > 0,
      { timeoutMs: 30_000 },
    );
    expect([...double.repository(REPO).pulls.values()].map((pull) => pull.title)).toEqual([]);
    const [refusal] = await refusalEvents(scene);
    expect(refusal).toContain(`the cluster runs app=${EVIL}, Git has app=registry.example/web:1.0.0`);
    expect(await double.gitIn(REPO, ['show', 'main:envs/prod/web.yaml'])).not.toContain(EVIL);
    expect(await double.gitIn(REPO, ['branch', '--list', 'rollgate/*'])).toBe('');
    // The Git commit is not reported green for a revision it does not describe. The refusal's Event and its
    // commit status are separate writes of one pass: the status can land just after the Event was read.
    const last = await eventually('the Git commit reported pending again', () => {
      const status = double
        .repository(REPO)
        .statuses.filter((s) => s.sha === gitCommit)
        .at(-1);
      return status?.state === 'pending' ? status : undefined;
    });
    expect(last).toMatchObject({ context: 'rollgate/staging', state: 'pending' });

    // Git moves on: the sync applies its template over the edit, the canary finishes, and that is promoted
    // (and auto-merged: the double reports no checks, which pass).
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0') });
    const pull = await eventually(
      'the promotion PR for 2.0.0',
      () => [...double.repository(REPO).pulls.values()][0],
      {
        timeoutMs: 40_000,
      },
    );
    expect(pull.title).toBe('Promote web to 2.0.0');
    await eventually(
      'merged by Rollgate',
      () => double.repository(REPO).pulls.get(pull.number)?.mergedAt !== undefined,
      {
        timeoutMs: 20_000,
      },
    );
    const prod = await double.gitIn(REPO, ['show', 'main:envs/prod/web.yaml']);
    expect(prod).toContain('registry.example/web:2.0.0');
    expect(prod).not.toContain(EVIL);
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
