// The reconcile reading the informer cache: no request when it is current, a 409 and a fresh re-plan when it is behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { requestsDuring, snapshot } from './cache-snapshot.ts';
import { ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

/** Counts the HTTP requests the sandbox (in this process) receives while `run` runs. */
async function countRequests(run: () => Promise<unknown>): Promise<number> {
  return (await requestsDuring(run)).length;
}

const canaries = (observed: ObservedState) =>
  observed.replicaSets.filter((rs) => rs.podTemplateHash !== observed.rollout.status?.stableRS);

describe('reconcile from the informer cache', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => harness.stop());

  it('a settled rollout read from a current cache costs no request at all', async () => {
    const key = await harness.createRollout(testRollout({ name: 'settled', replicas: 2 }));
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const cache = await snapshot(harness);

    const live = await countRequests(() => harness.reconcile(key, {}, false));
    const cached = await countRequests(async () => {
      const outcome = await harness.reconcile(key, { cache }, false);
      expect(outcome).toMatchObject({ kind: 'done', stats: { writes: 0 } });
    });
    expect(live).toBeGreaterThanOrEqual(3);
    expect(cached).toBe(0);
  });

  it('a cache behind another worker’s writes costs a 409 and a fresh re-plan, never a second canary', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'web', replicas: 4, steps: [{ setWeight: 50 }, { pause: {} }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    // The informers saw the new revision, then another worker's pass created the canary and wrote the
    // status before their watch events arrived here.
    const stale = await snapshot(harness);
    await harness.reconcile(key);
    const byOther = await harness.observe(key);
    expect(canaries(byOther)).toHaveLength(1);

    const passes: ObservedState[] = [];
    const outcome = await harness.reconcile(key, {
      cache: stale,
      onPass: ({ observed }) => {
        passes.push(observed);
      },
    });
    // The first pass planned from the stale cache (no canary yet) and its write was refused...
    expect(passes[0] && canaries(passes[0])).toEqual([]);
    expect(outcome.stats?.conflicts).toBeGreaterThanOrEqual(1);
    // ...the re-plan read the API, and the result is the one canary at its step's size.
    const after = await harness.observe(key);
    expect(canaries(after)).toHaveLength(1);
    expect(canaries(after)[0]?.name).toBe(canaries(byOther)[0]?.name);
    expect(canaries(after)[0]?.replicas).toBe(2);
    expect(after.rollout.status?.currentStepIndex).toBeGreaterThanOrEqual(
      byOther.rollout.status?.currentStepIndex ?? 0,
    );
    expect(harness.violations).toEqual([]);
  });

  it('a cache missing the stable ReplicaSet is not planned from: the new revision still starts as a canary', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'api', replicas: 4, steps: [{ setWeight: 50 }, { pause: {} }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const stableHash = (await harness.observe(key)).rollout.status?.stableRS;
    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'api' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    // The informers have the new spec, but their ReplicaSets lack the stable one (an event not here yet).
    const cache = await snapshot(harness);
    const stable = cache.all('ReplicaSet').find((rs) => rs.metadata?.name === `api-${stableHash}`);
    if (stable === undefined) throw new Error('no stable ReplicaSet listed');
    cache.apply('ReplicaSet', 'DELETED', stable);

    await harness.reconcile(key, { cache });
    const after = await harness.observe(key);
    expect(after.rollout.status?.stableRS).toBe(stableHash);
    expect(after.replicaSets.find((rs) => rs.podTemplateHash === stableHash)?.replicas).toBeGreaterThan(0);
    expect(canaries(after)).toHaveLength(1);
    expect(canaries(after)[0]?.replicas).toBe(2);
    expect(harness.violations).toEqual([]);
  });
});
