// The reconciler process and the watch events of a rollout whose job is running (issue 37): the job's next
// read takes them, so they start no job of their own; one after the job's last read still starts one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { MERGE_PATCH, createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startReconciler, type RunningReconciler } from '../../../src/process/start-reconciler.ts';
import { openQueue } from '../../../src/queue/open-queue.ts';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import type { ReconcileDeps } from '../../../src/reconciler/reconcile-rollout.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';

const NAMESPACE = 'default';
const ROLLOUT = { group: 'rollgate.dev', version: 'v1alpha1', namespace: NAMESPACE, plural: 'rollouts' };
const PREFIX = `rg-running-job-${randomUUID().slice(0, 8)}`;

type PassHook = NonNullable<ReconcileDeps['onPass']>;

let sandbox: Sandbox;
let clients: KubeClients;
let reconciler: RunningReconciler;
/** What the test does after a pass of the reconciler's jobs (awaited: the job waits for it). */
let afterPass: PassHook = () => undefined;
const redis = createRedisConnection(inject('redisUrl'));
const queue = openQueue('reconcile', { connection: redis, prefix: PREFIX });

interface LiveRollout {
  metadata?: { annotations?: Record<string, string> };
  status?: { phase?: string; currentPodHash?: string };
}

const rollout = async (name: string): Promise<LiveRollout> =>
  toPlainObject<LiveRollout>(await clients.custom.getNamespacedCustomObject({ ...ROLLOUT, name }));

const patchRollout = (name: string, body: object) =>
  clients.custom.patchNamespacedCustomObject({ ...ROLLOUT, name, body }, MERGE_PATCH);

const newImage = (name: string, image: string) =>
  patchRollout(name, { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } });

/** Reconcile jobs of `name` that ran to the end. */
async function jobsOf(name: string): Promise<number> {
  const jobs = await queue.getJobs(['completed', 'failed']);
  return jobs.filter((job) => (job.data as { name?: string }).name === name).length;
}

/** No reconcile job running or waiting to run (the planner's timers stay delayed). */
const settled = () =>
  eventually('the reconcile queue to settle', async () => {
    const counts = await queue.getJobCounts('active', 'wait', 'prioritized');
    return Object.values(counts).every((count) => count === 0) ? true : undefined;
  });

/** Waits until `name` is in `phase` on a pod-template hash other than `other`'s; returns the hash. */
const reaches = (name: string, phase: string, other?: string) =>
  eventually(
    `${name} ${phase}`,
    async () => {
      const live = await rollout(name);
      return live.status?.phase === phase && live.status.currentPodHash !== other
        ? live.status.currentPodHash
        : undefined;
    },
    { timeoutMs: 30_000 },
  );

/** A Healthy canary (1 replica, 50 % then a pause) on shop:1; returns its pod-template hash. */
async function healthyRollout(name: string): Promise<string | undefined> {
  await clients.custom.createNamespacedCustomObject({
    ...ROLLOUT,
    body: {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      metadata: { name, namespace: NAMESPACE },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: 'shop:1' }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
      },
    },
  });
  const hash = await reaches(name, 'Healthy');
  await settled();
  return hash;
}

beforeAll(async () => {
  // Pods are ready as soon as the sandbox's controllers run: a test decides when that is (settle).
  sandbox = await startSandbox({ readyDelayMs: 0 });
  clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: PREFIX },
    // No periodic resync to hide a lost wake-up.
    workers: { resyncMs: 3_600_000 },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  reconciler = await startReconciler(runtime, { reconcile: { onPass: (pass) => afterPass(pass) } });
}, 60_000);

afterAll(async () => {
  await reconciler?.stop({ force: true });
  await sandbox?.stop();
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
});

describe('watch events of a rollout whose job runs in this process', () => {
  it('events during the job are read by its next pass: the step in the one job that started it', async () => {
    const stable = await healthyRollout('touched');
    const before = await jobsOf('touched');
    let touched = false;
    afterPass = async ({ observed, report }) => {
      // After the pass that creates the canary ReplicaSet: someone annotates the Rollout, and the canary's
      // pod comes up, all while the job runs.
      if (touched || observed.rollout.metadata.name !== 'touched' || report.writes === 0) return;
      touched = true;
      await patchRollout('touched', { metadata: { annotations: { 'example.com/owner': 'team-a' } } });
      await sandbox.settle();
      // The job goes on once its process has every event (the watch has applied them to the cache).
      const cache = reconciler.cache;
      const seen = await cache.waitFor(() => {
        const annotations = (cache.get('Rollout', NAMESPACE, 'touched')?.metadata as LiveRollout['metadata'])
          ?.annotations;
        const replicaSets = cache
          .all('ReplicaSet')
          .filter((rs) => rs.metadata?.ownerReferences?.some((owner) => owner.name === 'touched'));
        return (
          annotations?.['example.com/owner'] === 'team-a' &&
          replicaSets.length === 2 &&
          replicaSets.every(
            (rs) =>
              (rs.status as { readyReplicas?: number } | undefined)?.readyReplicas ===
              (rs.spec as { replicas?: number } | undefined)?.replicas,
          )
        );
      }, 10_000);
      expect(seen).toBe(true);
    };
    try {
      await newImage('touched', 'shop:2');
      await reaches('touched', 'Paused', stable);
      await settled();
    } finally {
      afterPass = () => undefined;
    }
    expect(touched).toBe(true);
    // Before, those events asked for one more job after the running one, which read the same state.
    expect((await jobsOf('touched')) - before).toBe(1);
  }, 90_000);

  it("an event after the job's last read still starts a job: a new image set then is rolled out", async () => {
    const stable = await healthyRollout('late');
    await newImage('late', 'shop:2');
    const second = await reaches('late', 'Paused', stable);
    await settled();
    let changed = false;
    // The next job's last pass (it writes nothing: the rollout is at its pause) is when the image changes.
    afterPass = async ({ observed, report }) => {
      if (changed || observed.rollout.metadata.name !== 'late' || report.writes !== 0) return;
      changed = true;
      await newImage('late', 'shop:3');
      const seen = await reconciler.cache.waitFor(
        () =>
          (reconciler.cache.get('Rollout', NAMESPACE, 'late')?.metadata as { generation?: number })
            ?.generation === 3,
        10_000,
      );
      expect(seen).toBe(true);
    };
    try {
      // A change the planner ignores, to start a job whose only pass writes nothing.
      await patchRollout('late', { metadata: { annotations: { 'example.com/note': 'hello' } } });
      await eventually('the job to pass', async () => (changed ? true : undefined));
      // With no periodic resync, only the job's own enqueue at its end can bring shop:3 out.
      const third = await reaches('late', 'Paused', second);
      expect(third).not.toBe(stable);
    } finally {
      afterPass = () => undefined;
    }
  }, 90_000);
});
