// rollgate/<source> on the commit every source deployed, not only a promotion's `from`: prod's merge commit goes
// pending → success once prod's canary finished, and a commit whose prod canary aborted gets a failure saying so.
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { eventually } from '../../support/eventually.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

/** `web` with a 5 s progress deadline (a bad image aborts quickly) and a 3 s pause (its canary is seen running). */
const rollout = (image: string): string =>
  webRollout(image, {
    spec: '  progressDeadlineSeconds: 5\n  progressDeadlineAbort: true\n',
    secondStep: 'pause: { duration: 3s }',
  });

let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

describe('rollgate/<source> on every deployed commit (GitHub)', () => {
  it("prod's merge commit: pending while prod's canary runs, success once Healthy; an aborted prod canary: failure", async () => {
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(rollout('registry.example/web:1.0.0')),
      missingImages: ['registry.example/web:9.9.9'],
    });
    const { double, clients } = scene;
    const statuses = () => double.repository(REPO).statuses;
    const prodStatuses = (sha: string) =>
      statuses().filter((s) => s.sha === sha && s.context === 'rollgate/prod');
    await bothEnvironmentsHealthy(scene);

    // staging finishes 2.0.0 → the promotion PR → merged: prod runs 2.0.0 from the merge commit.
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout('registry.example/web:2.0.0') });
    const pull = await eventually('the promotion PR', () => scene!.forge.openPulls()[0], {
      timeoutMs: 40_000,
    });
    const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
    const { mergeCommitSha } = await scene.forge.client().merge(pull.number, headSha);
    await double.flushWebhooks();
    await eventually(
      'rollgate/prod success on the merge commit',
      () => prodStatuses(mergeCommitSha).some((s) => s.state === 'success'),
      { timeoutMs: 40_000 },
    );
    const prod = await liveWebRollout(clients, 'prod');
    expect(prod?.status?.phase).toBe('Healthy');
    expect(prod?.spec.template.spec.containers[0]?.image).toBe('registry.example/web:2.0.0');
    // pending first (applied, its canary running), then success; each state once: re-looks post nothing.
    expect(prodStatuses(mergeCommitSha).map((s) => s.state)).toEqual(['pending', 'success']);
    expect(prodStatuses(mergeCommitSha).at(-1)?.description).toBe('applied, healthy');

    // A restart looks at every source again (a poll and a health check each): nothing new to say, nothing posted.
    const restarted = await scene.restart();
    await eventually('prod polled by the new process', async () =>
      (await restarted.metrics.pollsTotal.get()).values.some(
        (v) => v.labels.source === 'prod' && v.value > 0,
      ),
    );
    await restarted.process.poller?.reports.settled();
    expect(prodStatuses(mergeCommitSha).map((s) => s.state)).toEqual(['pending', 'success']);

    // A hotfix straight to prod with an image that cannot be pulled: the canary aborts at its deadline.
    const bad = await double.commit(REPO, 'main', {
      'envs/prod/web.yaml': rollout('registry.example/web:9.9.9'),
    });
    await double.flushWebhooks();
    const failure = await eventually(
      'rollgate/prod failure on the bad commit',
      () => prodStatuses(bad).find((s) => s.state === 'failure'),
      { timeoutMs: 40_000 },
    );
    expect(failure.description).toMatch(/^applied, unhealthy: Rollout prod\/web: Degraded: /);
    expect(failure.description?.length).toBeLessThanOrEqual(140);
    expect((await liveWebRollout(clients, 'prod'))?.status?.phase).toBe('Degraded');
    // The merge commit keeps its success: a later commit's outcome is posted on that commit only.
    expect(prodStatuses(mergeCommitSha).at(-1)?.state).toBe('success');
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
