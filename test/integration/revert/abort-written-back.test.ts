// The running process writes a staging abort back: the ConfigMap goes back with the pods, a revert PR opens and is
// recorded on the Rollout, a restart does not run the bad revision again, and merging the PR leaves Git and cluster equal.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { eventually } from '../../support/eventually.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

/** `web` with a 5 s progress deadline: an image that cannot be pulled aborts quickly. */
const rollout = (image: string): string =>
  webRollout(image, { spec: '  progressDeadlineSeconds: 5\n  progressDeadlineAbort: true\n' });
const config = (level: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: web-config }\ndata: { LOG_LEVEL: ${level} }\n`;

let scene: PromotionScene | undefined;
afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

describe('abort written back by the running process (GitHub double, sandbox)', () => {
  it('restores the ConfigMap, opens one revert PR, survives a restart, and its merge leaves Git and cluster equal', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    scene = await startPromotionScene({
      logger,
      driftCheckEveryPoll: true,
      redisUrl: inject('redisUrl'),
      files: {
        'envs/staging/web.yaml': rollout('registry.example/web:1.0.0'),
        'envs/staging/config.yaml': config('info'),
        'envs/prod/web.yaml': rollout('registry.example/web:1.0.0'),
      },
      missingImages: ['registry.example/web:9.9.9'],
      staging: ({ apiUrl, token }) => ({
        // selfHeal: the drift check must hold the restored ConfigMap, not put the aborted content back.
        selfHeal: true,
        onAbort: { revert: { pullRequest: { provider: 'github', apiUrl, repository: REPO, token } } },
      }),
    });
    const { double, clients } = scene;
    const liveConfig = async () =>
      (await clients.core.readNamespacedConfigMap({ namespace: 'staging', name: 'web-config' })).data;
    const annotations = async () =>
      toPlainObject<{ metadata: { annotations?: Record<string, string> } }>(
        await clients.custom.getNamespacedCustomObject({
          group: 'rollgate.dev',
          version: 'v1alpha1',
          namespace: 'staging',
          plural: 'rollouts',
          name: 'web',
        }),
      ).metadata.annotations ?? {};
    const replicaSets = async () =>
      (await clients.apps.listNamespacedReplicaSet({ namespace: 'staging' })).items.map(
        (rs) => rs.metadata?.name,
      );
    await bothEnvironmentsHealthy(scene);

    await double.commit(
      REPO,
      'main',
      {
        'envs/staging/web.yaml': rollout('registry.example/web:9.9.9'),
        'envs/staging/config.yaml': config('debug'),
      },
      { message: 'web 9.9.9 with debug logs' },
    );
    await double.flushWebhooks();
    const pull = await eventually(
      'the revert pull request',
      () => scene!.forge.openPulls().find((p) => p.head.startsWith('rollgate/revert/staging/staging/web/')),
      { timeoutMs: 40_000 },
    );
    const aborted = await liveWebRollout(clients, 'staging');
    expect(aborted?.status?.phase).toBe('Degraded');
    await eventually('the Rollout says which pull request', async () =>
      (await annotations())['rollgate.dev/revert-pull-request']?.endsWith(`/${pull.number}`),
    );
    expect((await annotations())['rollgate.dev/revert-revision']).toBe(aborted?.status?.currentPodHash);
    expect(await liveConfig()).toEqual({ LOG_LEVEL: 'info' });
    // A poll with Git unchanged checks drift (selfHeal on): the restored ConfigMap is held, not re-applied.
    await scene.process.poller!.queues.poll.enqueuePoll('staging', 'webhook');
    await eventually('the drift check held the restored ConfigMap', () =>
      lines.some((line) => line.includes('drift held') && line.includes('web-config')),
    );
    expect(await liveConfig()).toEqual({ LOG_LEVEL: 'info' });

    // A restart: the aborted revision is not run again (no new ReplicaSet), no second pull request.
    const before = await replicaSets();
    const restarted = await scene.restart();
    await eventually('staging polled by the new process', async () =>
      (await restarted.metrics.pollsTotal.get()).values.some(
        (v) => v.labels.source === 'staging' && v.value > 0,
      ),
    );
    await eventually('the new process looked at the abort', async () => {
      const counts = await restarted.process.reverter!.queue.queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
      );
      return counts.waiting === 0 && counts.active === 0 && counts.delayed === 0;
    });
    // Its look read the commit with an empty cache (fetched its parent) and found the open pull request.
    expect(lines.filter((line) => line.includes('revert failed'))).toEqual([]);
    expect(await replicaSets()).toEqual(before);
    expect((await liveWebRollout(clients, 'staging'))?.status?.phase).toBe('Degraded');
    expect(scene.forge.openPulls().filter((p) => p.head.startsWith('rollgate/revert/'))).toHaveLength(1);
    expect(await liveConfig()).toEqual({ LOG_LEVEL: 'info' });

    // Merged: the next sync applies the parent's files; Git and the cluster say the same.
    const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
    await scene.forge.client().merge(pull.number, headSha);
    await double.flushWebhooks();
    await eventually(
      'staging back on 1.0.0 and Healthy',
      async () => {
        const live = await liveWebRollout(clients, 'staging');
        return (
          live?.status?.phase === 'Healthy' &&
          live.spec.template.spec.containers[0]?.image === 'registry.example/web:1.0.0'
        );
      },
      { timeoutMs: 40_000 },
    );
    expect(await liveConfig()).toEqual({ LOG_LEVEL: 'info' });
    expect(`${await double.gitIn(REPO, ['show', 'main:envs/staging/config.yaml'])}\n`).toBe(config('info'));
    expect(double.violations()).toEqual([]);
  }, 120_000);
});
