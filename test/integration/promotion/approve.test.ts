// `rollgate approve` end to end: a canary waits at pause {}, the approval is committed to Git (or proposed as a
// pull request on the forge double), the push webhook syncs it, and the rollout completes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { runCli as cli } from '../../support/run-cli.ts';
import type { KubeClients } from '../../../src/kube/client.ts';
import { approveRollout } from '../../../src/promoter/approval-commit.ts';
import { eventually } from '../../support/eventually.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';
import type { ForgeDouble } from '../../support/forge-double/forge-double.ts';
import {
  PROMOTION_REPO as REPO,
  startPromotionScene,
  type PromotionScene,
} from '../../support/promotion-scene.ts';

const FILE = 'envs/prod/web.yaml';

const rollout = (image: string, annotations = ''): string =>
  webRollout(image, { metadata: annotations, secondStep: 'pause: {}   # a human approves in Git' });

let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

const startScene = (annotations: string): Promise<PromotionScene> =>
  startPromotionScene({
    redisUrl: inject('redisUrl'),
    files: {
      'envs/staging/web.yaml': rollout('registry.example/web:1.0.0'),
      [FILE]: rollout('registry.example/web:1.0.0', annotations),
    },
    labels: ['approval'],
  });

const liveRollout = (clients: KubeClients) => liveWebRollout(clients, 'prod');

/** Prod Healthy at 1.0.0, then 2.0.0 committed: the canary stops at the pause (step 1). */
async function pausedAtGate(s: PromotionScene, annotations: string): Promise<string> {
  await eventually(
    'prod Healthy at 1.0.0',
    async () => (await liveRollout(s.clients))?.status?.phase === 'Healthy',
    {
      timeoutMs: 30_000,
    },
  );
  await s.double.commit(REPO, 'main', { [FILE]: rollout('registry.example/web:2.0.0', annotations) });
  const live = await eventually(
    'prod paused at step 1',
    async () => {
      const current = await liveRollout(s.clients);
      return current?.status?.phase === 'Paused' && current.status.currentStepIndex === 1
        ? current
        : undefined;
    },
    { timeoutMs: 30_000 },
  );
  return live.status?.currentPodHash ?? '';
}

/** The lines a diff adds and removes (without the file headers). */
async function changedLines(double: ForgeDouble, from: string, to: string): Promise<string[]> {
  const diff = await double.gitIn(REPO, ['diff', from, to]);
  return diff.split('\n').filter((line) => /^[-+][^-+]/.test(line));
}

describe('rollgate approve', () => {
  it('commits the approval onto the source branch; the sync lets the canary complete', async () => {
    scene = await startScene('');
    const s = scene;
    await eventually(
      'prod Healthy at 1.0.0',
      async () => (await liveRollout(s.clients))?.status?.phase === 'Healthy',
      {
        timeoutMs: 30_000,
      },
    );
    // The command itself, in this process: a rollout that is not at a gate exits 1 and says why.
    const kubeconfig = join(s.tmp.path, 'kubeconfig');
    await s.sandbox.writeKubeconfig(kubeconfig);
    const configFile = join(s.tmp.path, 'rollgate.json');
    writeFileSync(configFile, JSON.stringify(s.config));
    const refused = await cli('approve', 'web', '-n', 'prod', '-c', configFile, '--kubeconfig', kubeconfig);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(
      /^rollgate approve: rollout prod\/web has finished its steps \(phase Healthy\); only an indefinite pause/,
    );

    const hash = await pausedAtGate(s, '');
    const before = (await s.double.branchSha(REPO, 'main')) ?? '';
    const outcome = await approveRollout({ name: 'web', namespace: 'prod' }, s);
    expect(outcome).toMatchObject({
      kind: 'commit',
      gate: { hash, step: 1 },
      source: 'prod',
      file: FILE,
      branch: 'main',
      already: false,
    });
    expect(await s.double.branchSha(REPO, 'main')).toBe(outcome.commit);
    expect(await changedLines(s.double, before, outcome.commit)).toEqual([
      '+  annotations:',
      `+    rollgate.dev/approve: ${hash}/1`,
    ]);
    expect(await s.double.gitIn(REPO, ['log', '-1', '--format=%s', outcome.commit])).toBe(
      `Approve web step 1 (revision ${hash})`,
    );
    await s.double.flushWebhooks();
    await eventually(
      'prod Healthy at 2.0.0',
      async () => {
        const live = await liveRollout(s.clients);
        return (
          live?.status?.phase === 'Healthy' &&
          live.spec.template.spec.containers[0]?.image === 'registry.example/web:2.0.0'
        );
      },
      { timeoutMs: 30_000 },
    );
    expect(s.double.violations()).toEqual([]);
  }, 120_000);

  it('with --pr, opens a pull request whose diff adds only the annotation line', async () => {
    const annotations = '  annotations:\n    team: payments\n';
    scene = await startScene(annotations);
    const s = scene;
    const hash = await pausedAtGate(s, annotations);
    await expect(
      approveRollout(
        { name: 'web', namespace: 'prod', pullRequest: true },
        { ...s, config: { ...s.config, promotions: [] } },
      ),
    ).rejects.toMatchObject({ code: 'approval.no_promotion' });

    const main = (await s.double.branchSha(REPO, 'main')) ?? '';
    const outcome = await approveRollout({ name: 'web', namespace: 'prod', pullRequest: true }, s);
    expect(outcome).toMatchObject({ kind: 'pull-request', branch: `rollgate/approve/web/${hash}-1` });
    // The promotion may have its own pull request open (prod now differs from staging): find ours by branch.
    const pull = [...s.double.repository(REPO).pulls.values()].find(
      (candidate) => candidate.head === `rollgate/approve/web/${hash}-1`,
    );
    expect(pull).toMatchObject({
      title: `Approve web step 1 (revision ${hash})`,
      base: 'main',
      state: 'open',
      labels: ['approval'],
    });
    expect(outcome.kind === 'pull-request' ? outcome.pullRequest?.number : undefined).toBe(pull?.number);
    expect(await s.double.branchSha(REPO, 'main')).toBe(main);
    expect(await changedLines(s.double, main, outcome.commit)).toEqual([
      `+    rollgate.dev/approve: ${hash}/1`,
    ]);
    // Still paused: nothing is approved until the pull request is merged.
    expect((await liveRollout(s.clients))?.status?.phase).toBe('Paused');
    expect(s.double.violations()).toEqual([]);
  }, 120_000);
});
