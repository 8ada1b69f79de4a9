// `rollgate restart` through the sandbox: pods are evicted (PodDisruptionBudgets honoured) and replaced, never below the floor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { restartRollout } from '../../../src/views/rollout-commands.ts';
import { buildRolloutView } from '../../../src/views/rollout-view.ts';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

describe('restart (spec.restartAt) through the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => {
    await harness.stop();
  });

  async function pods(app: string): Promise<V1Pod[]> {
    const list = await harness.clients.core.listNamespacedPod({
      namespace: NAMESPACE,
      labelSelector: `app=${app}`,
    });
    return list.items.filter((pod) => pod.metadata?.deletionTimestamp == null);
  }

  const restartedAtOf = async (name: string) =>
    (await harness.rollout({ namespace: NAMESPACE, name })).status?.restartedAt;

  it('replaces every pod of a healthy rollout by eviction, never below replicas - maxUnavailable', async () => {
    const key = await harness.createRollout(testRollout({ name: 'restart', replicas: 4, steps: [] }));
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const before = new Set((await pods('restart')).map((pod) => pod.metadata?.name));
    expect(before.size).toBe(4);
    await harness.sandbox.advance(1000);

    const result = await restartRollout(harness.clients, key, harness.clock);
    expect(result.summary).toMatch(/restarts pods created before/);
    const restartAt = String((await harness.rollout(key)).spec.restartAt);
    const midway = await harness.runUntil(key, (o) => o.pods.some((pod) => !before.has(pod.name)), {
      timeoutMs: 60_000,
    });
    expect(midway).toBeLessThan(60_000);
    expect(buildRolloutView(await harness.observe(key)).restart?.state).toBe('pending');

    await harness.runUntil(key, (o) => o.rollout.status?.restartedAt !== undefined, { timeoutMs: 600_000 });
    expect(await restartedAtOf('restart')).toBe(restartAt);
    const after = await pods('restart');
    expect(after).toHaveLength(4);
    expect(after.some((pod) => before.has(pod.metadata?.name))).toBe(false);
    for (const pod of after)
      expect(new Date(String(pod.metadata?.creationTimestamp)).getTime()).toBeGreaterThanOrEqual(
        Date.parse(restartAt),
      );
    // One ReplicaSet throughout: a restart is not a new revision.
    const observed = await harness.observe(key);
    expect(observed.replicaSets).toHaveLength(1);
    expect(observed.rollout.status?.phase).toBe('Healthy');
    expect(buildRolloutView(observed).restart).toEqual({ restartAt, state: 'done', podsToRestart: 0 });
    expect(harness.violations).toEqual([]);
  });

  it('waits for a PodDisruptionBudget that allows no disruption, and finishes once it does', async () => {
    const key = await harness.createRollout(testRollout({ name: 'guarded', replicas: 4, steps: [] }));
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const policy = harness.clients.kubeConfig.makeApiClient(PolicyV1Api);
    const budget = (minAvailable: number) => ({
      namespace: NAMESPACE,
      body: {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'guarded' },
        spec: { minAvailable, selector: { matchLabels: { app: 'guarded' } } },
      },
    });
    await policy.createNamespacedPodDisruptionBudget(budget(4));
    await harness.sandbox.settle();
    const before = new Set((await pods('guarded')).map((pod) => pod.metadata?.name));
    await harness.sandbox.advance(1000);
    await restartRollout(harness.clients, key, harness.clock);

    for (let pass = 0; pass < 10; pass += 1) {
      const outcome = await harness.reconcile(key);
      // Refused evictions are not errors, and not a reason to spin: look again in 5 s. (The first call
      // also records the new generation in status: one more pass.)
      expect(outcome).toMatchObject({ kind: 'requeue', afterMs: 5000 });
      expect(outcome.stats?.passes).toBe(pass === 0 ? 2 : 1);
      await harness.sandbox.advance(5000);
    }
    expect((await pods('guarded')).map((pod) => pod.metadata?.name).sort()).toEqual([...before].sort());
    expect(await restartedAtOf('guarded')).toBeUndefined();
    // It did try: the evictions were asked for and refused by the budget.
    const events = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    expect(
      events.items.some((e) => e.involvedObject.name === 'guarded' && e.reason === 'RestartingPods'),
    ).toBe(true);

    await policy.deleteNamespacedPodDisruptionBudget({ namespace: NAMESPACE, name: 'guarded' });
    await policy.createNamespacedPodDisruptionBudget(budget(3));
    await harness.runUntil(key, (o) => o.rollout.status?.restartedAt !== undefined, { timeoutMs: 600_000 });
    expect((await pods('guarded')).some((pod) => before.has(pod.metadata?.name))).toBe(false);
    expect(harness.violations).toEqual([]);
  });
});
