// Read-your-writes: a pass after the job's own writes reads the informer cache once it holds them; another process's cache that trails them waits or asks the API instead of planning from it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LeaseLostError } from '../../../src/queue/job-lease.ts';
import { RedisWrittenVersions } from '../../../src/queue/written-versions.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';
import { informers, requestsDuring, snapshot } from './cache-snapshot.ts';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

const canaries = (observed: ObservedState) =>
  observed.replicaSets.filter((rs) => rs.podTemplateHash !== observed.rollout.status?.stableRS);

const newImage = (app: string) => ({
  template: {
    metadata: { labels: { app } },
    spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
  },
});

describe('read-your-writes through the informer cache', () => {
  let harness: ReconcileHarness;
  let redis: RedisTestScope;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
    redis = await openRedisTestScope(inject('redisUrl'));
  });
  afterAll(async () => {
    await harness.stop();
    await redis.cleanup();
  });

  /** A Healthy canary of `replicas` (setWeight 50, then a pause) given a new image: its next job starts one. */
  async function atNewImage(name: string, replicas: number) {
    const key = await harness.createRollout(
      testRollout({ name, replicas, steps: [{ setWeight: 50 }, { pause: {} }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    await harness.patchSpec(key, newImage(name));
    return key;
  }

  it('the passes after a job’s own writes read ReplicaSets, pods and the Rollout from the cache, not the API', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'ryw', replicas: 4, steps: [{ setWeight: 50 }, { pause: {} }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const live = await informers(harness);
    try {
      await harness.patchSpec(key, newImage('ryw'));
      const generation = ((await harness.rollout(key)).metadata as { generation?: number }).generation;
      const seen = await live.cache.waitFor(
        () =>
          (live.cache.get('Rollout', NAMESPACE, 'ryw')?.metadata as { generation?: number } | undefined)
            ?.generation === generation,
        5_000,
      );
      expect(seen).toBe(true);

      const passes: ObservedState[] = [];
      let outcome;
      const requests = await requestsDuring(async () => {
        outcome = await harness.reconcile(
          key,
          { cache: live.cache, onPass: ({ observed }) => void passes.push(observed) },
          false,
        );
      });
      // Several passes, each after the previous one's writes (the canary created, scaled, the status)...
      expect(passes.length).toBeGreaterThanOrEqual(2);
      expect(outcome).toMatchObject({ stats: { conflicts: 0 } });
      // ...and not one of them asked the API for the rollout's ReplicaSets, pods or the Rollout itself.
      const reads = requests.filter((r) => r.startsWith('GET '));
      expect(reads.filter((r) => /\/(replicasets|pods)$/.test(r))).toEqual([]);
      expect(reads.filter((r) => /\/rollouts\/ryw$/.test(r))).toEqual([]);
      expect(requests.some((r) => r.startsWith('POST ') && r.endsWith('/replicasets'))).toBe(true);
      // The last pass saw what the first ones wrote: the canary at its step's size.
      const last = passes.at(-1)!;
      expect(canaries(last)).toHaveLength(1);
      expect(canaries(last)[0]?.replicas).toBe(2);
      const after = await harness.observe(key);
      expect(canaries(after)).toHaveLength(1);
      expect(harness.violations).toEqual([]);
    } finally {
      live.stop();
    }
  });

  it('a process whose cache trails another’s writes reads what the handover names from the API: no 409, one canary', async () => {
    const key = await atNewImage('handover', 4);
    const shared = new RedisWrittenVersions(redis.connection, redis.prefix);
    // Process B's informers saw the new revision, and nothing after it.
    const trailing = await snapshot(harness);
    // Process A's job creates the canary and writes the status, and hands their versions over.
    await harness.reconcile(key, { writtenVersions: shared });
    const byA = await harness.observe(key);
    expect(canaries(byA)).toHaveLength(1);
    expect(await shared.load(key)).toContain(canaries(byA)[0]!.name);

    // B's next job for the rollout: its cache lacks A's writes, the handover says so.
    const passes: ObservedState[] = [];
    const outcome = await harness.reconcile(key, {
      cache: trailing,
      writtenVersions: shared,
      onPass: ({ observed }) => void passes.push(observed),
    });
    expect(passes[0] && canaries(passes[0]).map((rs) => rs.name)).toEqual([canaries(byA)[0]!.name]);
    expect(outcome.stats?.conflicts).toBe(0);
    const after = await harness.observe(key);
    expect(canaries(after)).toHaveLength(1);
    expect(canaries(after)[0]?.replicas).toBe(2);
    expect(harness.violations).toEqual([]);
  });

  it('a job hands its writes over once, as it ends, however many of its passes wrote (one Redis save a job)', async () => {
    const key = await atNewImage('once', 2);
    const redisStore = new RedisWrittenVersions(redis.connection, redis.prefix);
    const saved: string[] = [];
    const counting = {
      load: (k: typeof key) => redisStore.load(k),
      save: async (k: typeof key, value: string) => {
        saved.push(value);
        await redisStore.save(k, value);
      },
    };
    let writingPasses = 0;
    const outcome = await harness.reconcile(key, {
      writtenVersions: counting,
      onPass: ({ report }) => void (writingPasses += report.written.length > 0 ? 1 : 0),
    });
    // Several passes wrote (the canary, the revision annotation, the status…); one save carries them all.
    expect(writingPasses).toBeGreaterThan(1);
    expect(saved).toHaveLength(1);
    const canary = canaries(await harness.observe(key))[0]!;
    expect(saved[0]).toContain(canary.name);
    expect(await redisStore.load(key)).toBe(saved[0]);
    expect(outcome.kind).not.toBe('stalled');
  });

  it('a run that lost its job’s lock hands nothing over: the run that took the job over hands over its own', async () => {
    const key = await atNewImage('lost', 2);
    const saved: string[] = [];
    const counting = {
      load: async () => undefined,
      save: async (_key: typeof key, value: string) => void saved.push(value),
    };
    let wrote = 0;
    const outcome = await harness.reconcile(key, {
      writtenVersions: counting,
      // Another worker took the job over: the lock is lost at the first traffic call, after the canary's create.
      lease: { confirm: () => Promise.reject(new LeaseLostError('default/lost')) },
      onPass: ({ report }) => void (wrote += report.written.length),
    });
    expect(outcome.kind).toBe('done');
    expect(wrote).toBeGreaterThan(0);
    expect(saved).toEqual([]);
  });

  it('a garbled or missing handover is no expectation: a trailing cache still ends right, through a 409 and a re-plan', async () => {
    const key = await atNewImage('garbled', 4);
    const trailing = await snapshot(harness);
    await harness.reconcile(key);
    const byOther = await harness.observe(key);
    const shared = new RedisWrittenVersions(redis.connection, redis.prefix);
    await shared.save(key, '{"not": "a list"');

    const passes: ObservedState[] = [];
    const outcome = await harness.reconcile(key, {
      cache: trailing,
      writtenVersions: shared,
      onPass: ({ observed }) => void passes.push(observed),
    });
    // Planned from the trailing cache (no canary yet), refused, re-planned from the API.
    expect(passes[0] && canaries(passes[0])).toEqual([]);
    expect(outcome.stats?.conflicts).toBeGreaterThanOrEqual(1);
    const after = await harness.observe(key);
    expect(canaries(after).map((rs) => rs.name)).toEqual(canaries(byOther).map((rs) => rs.name));
    expect(canaries(after)[0]?.replicas).toBe(2);
    expect(harness.violations).toEqual([]);
  });
});
