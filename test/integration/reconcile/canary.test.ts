// A canary through the real client against the sandbox: to completion, with events, and a no-op reconcile that writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReconcileHarness, isFullyPromoted, testRollout, NAMESPACE } from './reconcile-harness.ts';

describe('reconcileRollout against the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => harness.stop());

  it('drives a canary through its steps to completion and then writes nothing', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'web', replicas: 3, scaleDownDelaySeconds: 5 }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const firstStable = (await harness.observe(key)).rollout.status?.stableRS;
    expect(firstStable).toBeDefined();

    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    const seenWeights = new Set<number>();
    const took = await harness.runUntil(
      key,
      (observed) => {
        const weight = observed.rollout.status?.canary?.weights?.canary.weight;
        if (weight !== undefined) seenWeights.add(weight);
        return isFullyPromoted(observed);
      },
      { timeoutMs: 120_000 },
    );
    const observed = await harness.observe(key);
    const status = observed.rollout.status ?? {};
    expect(status.stableRS).not.toBe(firstStable);
    expect(status.phase).toBe('Healthy');
    expect(seenWeights.has(20)).toBe(true);
    expect(seenWeights.has(60)).toBe(true);
    // Two timed pauses of 10 s each: it cannot have finished sooner, and should not take much longer.
    expect(took).toBeGreaterThanOrEqual(20_000);
    expect(took).toBeLessThan(60_000);
    const old = observed.replicaSets.find((rs) => rs.podTemplateHash === firstStable);
    expect(old?.replicas).toBe(0);
    expect(harness.violations).toEqual([]);

    const events = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    const reasons = new Set(events.items.filter((e) => e.involvedObject.name === 'web').map((e) => e.reason));
    expect(reasons.size).toBeGreaterThan(1);

    const noop = await harness.reconcile(key);
    expect(noop.stats?.writes).toBe(0);
    expect(noop.kind).toBe('done');
  });
});
