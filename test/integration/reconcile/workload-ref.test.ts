// spec.workloadRef through the real reconcile path on the sandbox: the template comes from the Deployment, a change of it is a
// new revision, and scaleDown: progressively hands the Deployment's pods over only as the rollout's become available.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

const REPLICAS = 4;

function deployment(name: string, image: string, behavior?: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: {
          labels: { app: name },
          ...(behavior ? { annotations: { 'sandbox.rollgate.dev/behavior': behavior } } : {}),
        },
        spec: { containers: [{ name: 'app', image }] },
      },
    },
  };
}

/** The harness's Rollout with its template and selector replaced by a reference to Deployment `name`. */
function referencing(name: string, scaleDown: string): Record<string, unknown> {
  const object = testRollout({
    name,
    replicas: REPLICAS,
    steps: [{ setWeight: 50 }, { pause: { duration: '5s' } }],
  });
  const { template: _template, selector: _selector, ...spec } = object.spec as Record<string, unknown>;
  return {
    ...object,
    spec: { ...spec, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name, scaleDown } },
  };
}

function available(observed: ObservedState): number {
  return observed.replicaSets.reduce((sum, rs) => sum + rs.status.availableReplicas, 0);
}

describe('workloadRef on the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => harness.stop());

  const deploymentReplicas = async (name: string) =>
    (await harness.clients.apps.readNamespacedDeployment({ namespace: NAMESPACE, name })).spec?.replicas;

  it('progressively: the Deployment gives up a pod only for a rollout pod available, under 30 % conflicts', async () => {
    const name = 'handover';
    await harness.clients.apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: deployment(name, 'app:1'),
    });
    const key = await harness.createRollout(referencing(name, 'progressively'));
    harness.sandbox.faults.conflictRate = 0.3;
    const seen: Array<[deployment: number, available: number]> = [];
    try {
      await harness.runUntil(
        key,
        (observed) => {
          const workload = observed.workload;
          if (workload?.state === 'resolved') seen.push([workload.replicas, available(observed)]);
          return isFullyPromoted(observed) && workload?.state === 'resolved' && workload.replicas === 0;
        },
        { timeoutMs: 120_000 },
      );
    } finally {
      harness.sandbox.faults.conflictRate = 0;
    }
    // Together they always keep the desired count available (or the Deployment still has all of its pods).
    for (const [deploymentPods, rolloutPods] of seen)
      expect(deploymentPods === REPLICAS || deploymentPods + rolloutPods >= REPLICAS).toBe(true);
    expect(seen[0]![0]).toBe(REPLICAS);
    const observed = await harness.observe(key);
    expect(observed.rollout.spec.template.spec.containers[0]!.image).toBe('app:1');
    expect(observed.rollout.status?.workloadObservedGeneration).toBe(
      String(
        (await harness.clients.apps.readNamespacedDeployment({ namespace: NAMESPACE, name })).metadata
          ?.generation,
      ),
    );
    expect(harness.violations).toEqual([]);
  });

  it("a change of the Deployment's template is a new revision, rolled out by the canary steps", async () => {
    const name = 'handover';
    const key = { namespace: NAMESPACE, name };
    const before = (await harness.observe(key)).rollout.status?.stableRS;
    await harness.clients.apps.patchNamespacedDeployment(
      {
        namespace: NAMESPACE,
        name,
        body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } },
      },
      MERGE_PATCH,
    );
    await harness.runUntil(
      key,
      (o) => o.rollout.status?.currentPodHash !== before && o.rollout.status?.phase === 'Paused',
      {
        timeoutMs: 30_000,
      },
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const observed = await harness.observe(key);
    expect(observed.rollout.status?.stableRS).not.toBe(before);
    const stable = observed.replicaSets.find(
      (rs) => rs.podTemplateHash === observed.rollout.status?.stableRS,
    );
    expect(JSON.stringify(stable?.template)).toContain('app:2');
    expect(await deploymentReplicas(name)).toBe(0);
    expect(harness.violations).toEqual([]);
  });

  it('progressively: rollout pods that never become available take nothing from the Deployment', async () => {
    const name = 'unpullable';
    await harness.clients.apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: deployment(name, 'app:1', 'image-pull-backoff'),
    });
    const key = await harness.createRollout(referencing(name, 'progressively'));
    await harness.runUntil(key, (o) => o.replicaSets.some((rs) => rs.replicas === REPLICAS), {
      timeoutMs: 10_000,
    });
    await harness.sandbox.advance(30_000);
    await harness.reconcile(key);
    expect(available(await harness.observe(key))).toBe(0);
    expect(await deploymentReplicas(name)).toBe(REPLICAS);
  });

  it('onsuccess: 0 once Healthy, and replicas a Git sync puts back with a new template go again mid-canary', async () => {
    const name = 'onsuccess';
    await harness.clients.apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: deployment(name, 'app:1'),
    });
    const object = referencing(name, 'onsuccess');
    (object.spec as { strategy: { canary: { steps: unknown[] } } }).strategy.canary.steps = [
      { setWeight: 50 },
      { pause: {} },
    ];
    const key = await harness.createRollout(object);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    await harness.reconcile(key);
    expect(await deploymentReplicas(name)).toBe(0);
    // What a sync of the Deployment as written in Git does: its replicas and a new template.
    await harness.clients.apps.patchNamespacedDeployment(
      {
        namespace: NAMESPACE,
        name,
        body: {
          spec: { replicas: REPLICAS, template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } },
        },
      },
      MERGE_PATCH,
    );
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    expect(await deploymentReplicas(name)).toBe(0);
    expect(harness.violations).toEqual([]);
  });

  it('a reference the API server accepted but Rollgate cannot use waits with InvalidSpec naming why', async () => {
    const statefulSet = referencing('stateful', 'never');
    (statefulSet.spec as { workloadRef: Record<string, unknown> }).workloadRef.kind = 'StatefulSet';
    const both = referencing('both', 'never');
    await harness.clients.apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: deployment('both', 'app:1'),
    });
    (both.spec as Record<string, unknown>).template = (
      testRollout({ name: 'both' }).spec as { template: unknown }
    ).template;
    for (const [object, reason] of [
      [
        statefulSet,
        'workloadRef apps/v1 StatefulSet stateful is not supported: only apps/v1 Deployment, apps/v1 ReplicaSet or v1 PodTemplate',
      ],
      [
        both,
        'spec.template and spec.workloadRef are both set: remove the template, it is read from the Deployment',
      ],
    ] as const) {
      const key = await harness.createRollout(object);
      await harness.reconcile(key);
      const observed = await harness.observe(key);
      expect(observed.rollout.status?.phase).toBe('Degraded');
      expect(observed.rollout.status?.message).toBe(`InvalidSpec: ${reason}`);
      expect(observed.rollout.status?.conditions).toContainEqual(
        expect.objectContaining({ type: 'InvalidSpec', reason: 'InvalidSpec', message: reason }),
      );
      expect(observed.replicaSets).toEqual([]);
    }
  });

  it('never (the default): the Deployment is left as it is', async () => {
    const name = 'untouched';
    await harness.clients.apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: deployment(name, 'app:1'),
    });
    const object = referencing(name, 'never');
    const spec = object.spec as { workloadRef: Record<string, unknown> };
    delete spec.workloadRef.scaleDown;
    const key = await harness.createRollout(object);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    expect(await deploymentReplicas(name)).toBe(REPLICAS);
  });
});
