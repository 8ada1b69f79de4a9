// Two `rollgate run` processes (the real CLI, built) on one Redis and one sandbox cluster behave as one: a
// canary is driven through a supersede (Rev3 while Rev2 is mid-canary) and an abort while one of them is
// killed with SIGKILL in the middle of a reconcile; the survivor takes the abandoned job over within 15 s,
// and the cluster holds exactly one ReplicaSet per pod-template hash and no duplicate Events or creates.
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import type { RolloutStatus } from '../../../src/manifest/rollout.ts';
import { takeoverBoundMs, DEFAULT_LOCK_DURATION_MS } from '../../../src/queue/start-worker.ts';
import { runCli } from '../../support/run-cli.ts';
import { eventually } from '../../support/eventually.ts';
import {
  startRollgateProcessScene,
  type RollgateProcessScene,
} from '../../support/rollgate-process-scene.ts';

const NAME = 'ha';
const REPLICAS = 4;
const STEPS = [{ setWeight: 25 }, { pause: { duration: '1s' } }, { setWeight: 50 }, { pause: {} }];
const LAST_STEP = STEPS.length - 1;
/** What the issue asks of a takeover. */
const TAKEOVER_LIMIT_MS = 15_000;
/** Per API request while a job is to be caught running: long enough that a pass is in flight for a while. */
const SLOW_API_MS = 250;

let scene: RollgateProcessScene;

const custom = (): CustomObjectsApi => scene.sandbox.kubeConfig.makeApiClient(CustomObjectsApi);
const rolloutApi = {
  group: ROLLGATE_API_GROUP,
  version: 'v1alpha1',
  namespace: 'default',
  plural: 'rollouts',
};

async function status(): Promise<RolloutStatus> {
  const r = (await custom().getNamespacedCustomObject({ ...rolloutApi, name: NAME })) as {
    status?: RolloutStatus;
  };
  return r.status ?? {};
}

async function setImage(image: string): Promise<void> {
  await custom().patchNamespacedCustomObject(
    {
      ...rolloutApi,
      name: NAME,
      body: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
    },
    MERGE_PATCH,
  );
}

/** The reconcile job hash fields these checks read (BullMQ's names). */
interface JobRecord {
  id: string;
  pb?: string;
  processedOn?: number;
  finishedOn?: number;
  stc?: number;
}

async function reconcileJob(id: string): Promise<JobRecord> {
  const { connection, prefix } = scene.redis;
  const fields = await connection.hgetall(`{${prefix}}:reconcile:${id}`);
  const num = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));
  return {
    id,
    ...(fields.pb !== undefined ? { pb: fields.pb } : {}),
    ...(fields.processedOn !== undefined ? { processedOn: num(fields.processedOn) } : {}),
    ...(fields.finishedOn !== undefined ? { finishedOn: num(fields.finishedOn) } : {}),
    ...(fields.stc !== undefined ? { stc: num(fields.stc) } : {}),
  } as JobRecord;
}

/** Every reconcile job still in Redis (finished ones are kept an hour). */
async function reconcileJobs(): Promise<JobRecord[]> {
  return Promise.all((await scene.jobIds('reconcile')).map((id) => reconcileJob(id)));
}

beforeAll(async () => {
  scene = await startRollgateProcessScene({ redisUrl: inject('redisUrl'), runDir: inject('runDir') });
  const [a, b] = [scene.start('A', 'run'), scene.start('B', 'run')];
  await Promise.all([a.started(), b.started()]);
}, 90_000);

afterAll(async () => {
  await scene?.stop();
});

describe('two rollgate run processes on one Redis and one cluster', () => {
  it('drive a canary through a kill -9, a supersede and an abort as one', async () => {
    expect(takeoverBoundMs(DEFAULT_LOCK_DURATION_MS)).toBeLessThanOrEqual(TAKEOVER_LIMIT_MS - 2_000);
    await custom().createNamespacedCustomObject({
      ...rolloutApi,
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Rollout',
        metadata: { name: NAME, namespace: 'default' },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: NAME } },
          template: {
            metadata: { labels: { app: NAME } },
            spec: { containers: [{ name: 'app', image: 'app:1' }] },
          },
          strategy: { canary: { steps: STEPS } },
        },
      },
    });
    const rev1 = await eventually('Rev1 to be Healthy', async () => {
      const s = await status();
      return s.phase === 'Healthy' ? s : undefined;
    });
    const { sandbox, redis, processes: instances } = scene;
    // Its Event too: a job sends its Events after its writes, so a status already Healthy can come before
    // the RolloutCompleted; had the slowed requests below caught that job and killed it, the Event would
    // be lost with it (Events are sent once, after the writes they tell of) and Rev2 would not be what
    // is killed.
    await eventually('Rev1 RolloutCompleted Event', async () => {
      const events = await sandbox.kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedEvent({ namespace: 'default' });
      return events.items.some((e) => e.reason === 'RolloutCompleted') || undefined;
    });

    // Rev2, with every API request slowed down so that a reconcile pass is caught running; the process
    // running it is killed on the spot, mid-pass (some of its writes done, others not, its job locked).
    sandbox.faults.latencyMs = SLOW_API_MS;
    await setImage('app:2');
    const active = await eventually(
      'a reconcile job to be running',
      async () => {
        const [id] = await redis.connection.lrange(`{${redis.prefix}}:reconcile:active`, 0, 0);
        if (id === undefined) return undefined;
        const job = await reconcileJob(id);
        return job.pb !== undefined && job.finishedOn === undefined ? job : undefined;
      },
      { intervalMs: 10, timeoutMs: 20_000 },
    );
    const victim = instances.find((i) => i.workerName === active.pb);
    expect(victim, `no instance is named ${active.pb}`).toBeDefined();
    const survivor = instances.find((i) => i !== victim)!;
    await victim!.kill();
    const killedAt = Date.now();
    sandbox.faults.latencyMs = 0;
    const abandoned = await reconcileJob(active.id);

    // The survivor's first run of a reconcile job after the kill: the abandoned one (its lock expired and
    // the stalled check moved it back), or, had it finished in the last moment, the next one.
    const takenOver = await eventually(
      'the survivor to take the reconcile work over',
      async () => {
        const jobs = await reconcileJobs();
        const runs = jobs.filter((j) => j.pb === survivor.workerName && (j.processedOn ?? 0) > killedAt);
        return runs.sort((x, y) => (x.processedOn ?? 0) - (y.processedOn ?? 0))[0];
      },
      { intervalMs: 50, timeoutMs: TAKEOVER_LIMIT_MS + 5_000 },
    );
    const takeoverMs = (takenOver.processedOn ?? 0) - killedAt;
    process.stderr.write(
      `[two-instances] killed ${victim!.label} mid-pass on job ${active.id}; ${survivor.label} took over after ${takeoverMs} ms\n`,
    );
    expect(takeoverMs, `took over after ${takeoverMs} ms`).toBeLessThanOrEqual(TAKEOVER_LIMIT_MS);
    if (abandoned.finishedOn === undefined) {
      // It was still running when killed: BullMQ's stalled-job recovery must have handed this very job on.
      expect(takenOver.id).toBe(active.id);
      expect((await reconcileJob(active.id)).stc).toBe(1);
      // The survivor logs the stall once BullMQ's check returns; its stdout reaches this test through a pipe
      // that may deliver the line after the job already shows as taken in Redis.
      await eventually(
        'the survivor to log the stall',
        () =>
          survivor.output().includes('job stalled (its worker died or was starved of CPU); it runs again') ||
          undefined,
        { intervalMs: 50, timeoutMs: 5_000 },
      );
    }

    const rev2 = await eventually(
      'Rev2 to reach its indefinite pause',
      async () => {
        const s = await status();
        return s.currentStepIndex === LAST_STEP &&
          s.phase === 'Paused' &&
          s.currentPodHash !== rev1.currentPodHash
          ? s
          : undefined;
      },
      { timeoutMs: 20_000 },
    );

    // The killed one comes back as a new process: two again for the supersede and the abort.
    const restarted = scene.start(`${victim!.label}'`, 'run');
    await restarted.started();
    await setImage('app:3');
    const rev3 = await eventually(
      'Rev3 to supersede Rev2 and reach its indefinite pause',
      async () => {
        const s = await status();
        return s.currentStepIndex === LAST_STEP &&
          s.phase === 'Paused' &&
          s.currentPodHash !== rev2.currentPodHash
          ? s
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const aborted = await runCli('abort', NAME, '-n', 'default', '--kubeconfig', scene.kubeconfig);
    expect(aborted).toMatchObject({ code: 0, stderr: '' });

    const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
    const final = await eventually(
      'the abort to scale everything back to Rev1',
      async () => {
        const s = await status();
        if (s.phase !== 'Degraded' || s.abort !== true) return undefined;
        const sets = (await apps.listNamespacedReplicaSet({ namespace: 'default' })).items;
        const replicas = (hash: string | undefined): number | undefined =>
          sets.find((rs) => rs.metadata?.labels?.['rollouts-pod-template-hash'] === hash)?.spec?.replicas;
        return replicas(rev1.currentPodHash) === REPLICAS &&
          replicas(rev2.currentPodHash) === 0 &&
          replicas(rev3.currentPodHash) === 0
          ? { status: s, sets }
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(final.status.stableRS).toBe(rev1.currentPodHash);
    expect(final.status.canary?.weights?.canary.weight ?? 0).toBe(0);

    // Exactly one ReplicaSet per pod-template hash, each created once.
    const hashes = final.sets.map((rs) => rs.metadata?.labels?.['rollouts-pod-template-hash']);
    expect(hashes.sort()).toEqual([rev1.currentPodHash, rev2.currentPodHash, rev3.currentPodHash].sort());
    const audit = sandbox.audit.entries();
    const creates = (resource: string): string[] =>
      audit
        .filter((e) => e.verb === 'POST' && e.resource === resource && e.code === 201)
        .map((e) => e.name ?? '');
    const rsCreates = creates('replicasets');
    expect(rsCreates.sort()).toEqual(final.sets.map((rs) => rs.metadata?.name ?? '').sort());

    // No duplicate Events: one object per (Rollout, reason, message), created once, and each recorded
    // exactly as often as it happened. Steps and pauses happen once for Rev2 and once for Rev3 with the
    // same message (one Event, count 2); a pass re-run after the kill must add nothing to any count.
    const events = (
      await sandbox.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: 'default' })
    ).items.filter((e) => e.source?.component === 'rollgate');
    const keys = events.map(
      (e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason} ${e.message}`,
    );
    expect(new Set(keys).size, keys.join('\n')).toBe(keys.length);
    const eventNames = new Set(events.map((e) => e.metadata?.name ?? ''));
    expect(
      creates('events')
        .filter((name) => eventNames.has(name))
        .sort(),
    ).toEqual([...eventNames].sort());
    const timesByReason: Record<string, number> = {};
    for (const e of events)
      timesByReason[e.reason ?? ''] = (timesByReason[e.reason ?? ''] ?? 0) + (e.count ?? 1);
    expect(timesByReason, JSON.stringify(events.map((e) => [e.reason, e.message, e.count]))).toEqual({
      ReplicaSetCreated: 3, // Rev1, Rev2, Rev3
      RolloutCompleted: 1, // Rev1
      RolloutUpdated: 1, // Rev2
      RolloutStepCompleted: 6, // steps 0, 1, 2 of Rev2 and of Rev3
      RolloutPaused: 4, // the timed and the indefinite pause of Rev2 and of Rev3
      RolloutSuperseded: 1, // Rev2 by Rev3
      RolloutAborted: 1,
    });

    // Every key the two wrote carries the hash-tagged prefix: one Redis Cluster slot, as BullMQ's
    // multi-key scripts (and ours, deduplicated-enqueue and observed-heads) require.
    const written = await scene.keysWithPrefix();
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((key) => !key.startsWith(`{${redis.prefix}}:`))).toEqual([]);

    // Nothing was failed or left behind in the queue.
    expect(await redis.connection.zcard(`{${redis.prefix}}:reconcile:failed`)).toBe(0);
  }, 60_000);
});
