// An abort typed during a 3-second pause lands inside the pause: the real CLI, built as `npm ci` builds it,
// against a sandbox cluster and a running `rollgate reconciler`, on the real clock.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { AppsV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import type { RolloutStatus } from '../../../src/manifest/rollout.ts';
import { eventually } from '../../support/eventually.ts';
import {
  startRollgateProcessScene,
  type RollgateProcessScene,
} from '../../support/rollgate-process-scene.ts';
import { testRollout } from '../reconcile/reconcile-harness.ts';

const NAME = 'paused';
const PAUSE_MS = 3_000;
/** The step after the pause: reaching it would mean the pause ran out before the abort arrived. */
const STEPS = [{ setWeight: 50 }, { pause: { duration: '3s' } }, { setWeight: 75 }, { pause: {} }];
const PAUSE_STEP = 1;

interface Rollout {
  metadata: { resourceVersion?: string };
  status?: RolloutStatus;
}

function cliEnv(): NodeJS.ProcessEnv {
  const { ROLLGATE_DEV: _dev, ...env } = process.env;
  return { ...env, ROLLGATE_CONFIG: '' };
}

describe('rollgate abort during a timed pause', () => {
  let scene: RollgateProcessScene;

  const custom = () => scene.sandbox.kubeConfig.makeApiClient(CustomObjectsApi);
  const rolloutsPath = `/apis/${ROLLGATE_API_GROUP}/v1alpha1/namespaces/default/rollouts`;

  async function rollout(): Promise<Rollout> {
    return (await custom().getNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      name: NAME,
    })) as Rollout;
  }

  beforeAll(async () => {
    // The CLI as installed, never the source through tsx, whose start-up alone can outlast the pause on a
    // busy machine. The reconciler installs the CRDs before it says it started.
    scene = await startRollgateProcessScene({ redisUrl: inject('redisUrl'), runDir: inject('runDir') });
    await scene.start('reconciler', 'reconciler').started();
  }, 90_000);

  afterAll(async () => {
    await scene?.stop();
  });

  it('aborts inside the pause: never reaches the step after it, canary at 0', async () => {
    await custom().createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      body: testRollout({ name: NAME, replicas: 2, image: 'app:1.0', steps: STEPS }),
    });
    const first = await eventually('the first revision to be Healthy', async () => {
      const current = await rollout();
      return current.status?.phase === 'Healthy' ? current : undefined;
    });

    // Every version of the rollout from here on, in order: the sandbox replays a watch from a
    // resourceVersion, so no short-lived status can slip between two reads.
    const history: RolloutStatus[] = [];
    const { sandbox, cliRoot, kubeconfig } = scene;
    const watch = await new Watch(sandbox.kubeConfig).watch(
      rolloutsPath,
      { resourceVersion: first.metadata.resourceVersion },
      (_type, object: Rollout) => history.push(object.status ?? {}),
      () => undefined,
    );
    try {
      await custom().patchNamespacedCustomObject(
        {
          group: ROLLGATE_API_GROUP,
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'rollouts',
          name: NAME,
          body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2.0' }] } } } },
        },
        MERGE_PATCH,
      );
      const paused = await eventually(
        'the canary to reach its 3-second pause',
        async () => {
          const status = (await rollout()).status;
          return status?.currentStepIndex === PAUSE_STEP &&
            status.pauseConditions?.some((c) => c.reason === 'CanaryPauseStep')
            ? status
            : undefined;
        },
        { intervalMs: 20, timeoutMs: 20_000 },
      );
      const pauseStarted = Date.parse(
        paused.pauseConditions?.find((c) => c.reason === 'CanaryPauseStep')?.startTime ?? '',
      );

      // As a user would: the moment the pause shows, type `rollgate abort`.
      const typed = Date.now();
      const abort = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
        (resolve, reject) => {
          const child = spawn(
            process.execPath,
            [join(cliRoot, 'bin', 'rollgate.js'), 'abort', NAME, '-n', 'default', '--kubeconfig', kubeconfig],
            { env: cliEnv() },
          );
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        },
      );
      const answered = Date.now();
      expect(abort).toEqual({ code: 0, stdout: `rollout ${NAME} aborted\n`, stderr: '' });
      expect(
        answered - pauseStarted,
        `abort answered ${answered - typed} ms after it was typed, ${answered - pauseStarted} ms into the pause`,
      ).toBeLessThan(PAUSE_MS);

      const aborted = await eventually(
        'the rollout to be Degraded with its canary scaled to 0',
        async () => {
          const status = (await rollout()).status;
          if (status?.phase !== 'Degraded' || status.abort !== true) return undefined;
          const replicaSets = await sandbox.kubeConfig
            .makeApiClient(AppsV1Api)
            .listNamespacedReplicaSet({ namespace: 'default', labelSelector: `app=${NAME}` });
          const canary = replicaSets.items.find(
            (rs) => rs.metadata?.labels?.['rollouts-pod-template-hash'] === status.currentPodHash,
          );
          return canary?.spec?.replicas === 0 && status.canary?.weights?.canary.weight === 0
            ? status
            : undefined;
        },
        { timeoutMs: 10_000 },
      );
      expect(aborted.stableRS).toBe(first.status?.stableRS);

      // The pause's own end must not move an aborted rollout on: wait past it, then read the history.
      const pauseEnds = pauseStarted + PAUSE_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, pauseEnds + 1_000 - Date.now())));
      const final = (await rollout()).status;
      expect(final?.abort).toBe(true);
      expect(final?.phase).toBe('Degraded');
      // Until the reconciler sees the new template, the status is still the finished first revision's.
      const started = history.findIndex((s) => s.currentStepIndex === 0);
      expect(started).toBeGreaterThanOrEqual(0);
      const canary = history.slice(started);
      const reachedPause = canary.some((s) => s.currentStepIndex === PAUSE_STEP);
      const passedPause = canary.filter((s) => (s.currentStepIndex ?? 0) > PAUSE_STEP);
      const weights = canary.map((s) => s.canary?.weights?.canary.weight);
      expect(reachedPause).toBe(true);
      expect(passedPause).toEqual([]);
      expect(weights).not.toContain(75);
    } finally {
      watch.abort();
    }
  }, 30_000);
});
