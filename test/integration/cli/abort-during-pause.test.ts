// An abort typed during a 3-second pause lands inside the pause: the real CLI, built as `npm ci` builds it,
// against a sandbox cluster and a running `rollgate reconciler`, on the real clock.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildCli } from '../../../scripts/build.ts';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../../../src/spec/api-version.ts';
import type { RolloutStatus } from '../../../src/spec/rollout.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

const repo = join(import.meta.dirname, '..', '..', '..');
const NAME = 'paused';
const PAUSE_MS = 3_000;
/** The step after the pause: reaching it would mean the pause ran out before the abort arrived. */
const STEPS = [{ setWeight: 50 }, { pause: { duration: '3s' } }, { setWeight: 75 }, { pause: {} }];
const PAUSE_STEP = 1;

interface Rollout {
  metadata: { resourceVersion?: string };
  status?: RolloutStatus;
}

/**
 * An installed copy of the CLI: bin/ and package.json beside a bundle built from the current source.
 * Built privately, so the test neither depends on nor races with the checkout's dist/ (and never runs the
 * source through tsx, whose start-up alone can outlast the pause on a busy machine).
 */
async function installCli(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'rollgate-cli-'));
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(repo, 'bin', 'rollgate.js'), join(root, 'bin', 'rollgate.js'));
  copyFileSync(join(repo, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
  await buildCli(join(root, 'dist', 'cli'));
  return root;
}

function cliEnv(): NodeJS.ProcessEnv {
  const { ROLLGATE_DEV: _dev, ...env } = process.env;
  return { ...env, ROLLGATE_CONFIG: '' };
}

describe('rollgate abort during a timed pause', () => {
  let cli: string;
  let sandbox: Sandbox;
  let kubeconfig: string;
  let redis: RedisTestScope;
  let reconciler: ChildProcess;
  let reconcilerLog = '';

  const custom = () => sandbox.kubeConfig.makeApiClient(CustomObjectsApi);
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
    [cli, sandbox, redis] = await Promise.all([
      installCli(),
      startSandbox({ readyDelayMs: 100 }),
      openRedisTestScope(inject('redisUrl')),
    ]);
    kubeconfig = join(cli, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    reconciler = spawn(
      process.execPath,
      [
        join(cli, 'bin', 'rollgate.js'),
        'reconciler',
        '--kubeconfig',
        kubeconfig,
        '--redis',
        inject('redisUrl'),
        '--port',
        '0',
        '--set',
        'server.host=127.0.0.1',
        '--set',
        `redis.prefix=${redis.prefix}`,
      ],
      { env: cliEnv() },
    );
    reconciler.stdout?.on('data', (chunk: Buffer) => (reconcilerLog += chunk.toString()));
    reconciler.stderr?.on('data', (chunk: Buffer) => (reconcilerLog += chunk.toString()));
    // The reconciler installs the CRDs as it starts: once they are there, Rollouts can be created.
    await eventually(
      'the reconciler to install the Rollout CRD',
      async () => {
        if (reconciler.exitCode !== null) throw new Error(`reconciler exited:\n${reconcilerLog}`);
        await custom().listNamespacedCustomObject({
          group: ROLLGATE_API_GROUP,
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'rollouts',
        });
        return true;
      },
      { timeoutMs: 30_000 },
    );
  }, 90_000);

  afterAll(async () => {
    if (reconciler && reconciler.exitCode === null) {
      const exited = new Promise((resolve) => reconciler.once('exit', resolve));
      reconciler.kill('SIGTERM');
      const limit = setTimeout(() => reconciler.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(limit);
    }
    await sandbox?.stop();
    await redis?.cleanup();
    if (cli) rmSync(cli, { recursive: true, force: true });
  });

  it('aborts inside the pause: never reaches the step after it, canary at 0', async () => {
    await custom().createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Rollout',
        metadata: { name: NAME, namespace: 'default' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: NAME } },
          template: {
            metadata: { labels: { app: NAME } },
            spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
          },
          strategy: { canary: { steps: STEPS } },
        },
      },
    });
    const first = await eventually('the first revision to be Healthy', async () => {
      const current = await rollout();
      return current.status?.phase === 'Healthy' ? current : undefined;
    });

    // Every version of the rollout from here on, in order: the sandbox replays a watch from a
    // resourceVersion, so no short-lived status can slip between two reads.
    const history: RolloutStatus[] = [];
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
            [join(cli, 'bin', 'rollgate.js'), 'abort', NAME, '-n', 'default', '--kubeconfig', kubeconfig],
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
