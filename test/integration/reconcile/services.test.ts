// Replica-ratio traffic: the planner points the named canary and stable Services at the pod-template hashes through a canary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReconcileHarness, isFullyPromoted, testRollout, NAMESPACE } from './reconcile-harness.ts';

const HASH = 'rollouts-pod-template-hash';

describe('canaryService / stableService selectors', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 11 });
  });
  afterAll(async () => harness.stop());

  async function selector(name: string): Promise<Record<string, string>> {
    return (
      (await harness.clients.core.readNamespacedService({ namespace: NAMESPACE, name })).spec?.selector ?? {}
    );
  }

  it('points the canary Service at the canary during the steps and both at the new stable after completion', async () => {
    await harness.createService('svc-canary', { app: 'svc' });
    await harness.createService('svc-stable', { app: 'svc' });
    const key = await harness.createRollout(
      testRollout({
        name: 'svc',
        replicas: 4,
        canaryService: 'svc-canary',
        stableService: 'svc-stable',
        steps: [{ setWeight: 25 }, { pause: {} }],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const firstStable = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    expect(await selector('svc-stable')).toEqual({ app: 'svc', [HASH]: firstStable });
    expect(await selector('svc-canary')).toEqual({ app: 'svc', [HASH]: firstStable });

    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'svc' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    const canaryHash = (await harness.observe(key)).rollout.status?.currentPodHash ?? '';
    expect(canaryHash).not.toBe(firstStable);
    expect((await selector('svc-canary'))[HASH]).toBe(canaryHash);
    expect((await selector('svc-stable'))[HASH]).toBe(firstStable);

    await harness.clients.custom.patchNamespacedCustomObjectStatus(
      {
        group: 'rollgate.dev',
        version: 'v1alpha1',
        plural: 'rollouts',
        ...key,
        body: { status: { pauseConditions: null } },
      },
      (await import('../../../src/kube/client.ts')).MERGE_PATCH,
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    expect((await selector('svc-stable'))[HASH]).toBe(canaryHash);
    expect((await selector('svc-canary'))[HASH]).toBe(canaryHash);
    expect(harness.violations).toEqual([]);
  });
});
