// spec.workloadRef to a v1 PodTemplate or an apps/v1 ReplicaSet through the real reconcile path on the sandbox:
// the rollout runs the referenced template (and a ReplicaSet's selector), a change of it is a new revision, and
// the referenced ReplicaSet keeps its own pods: never adopted, never scaled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

const podSpec = (image: string) => ({ containers: [{ name: 'app', image }] });

/** The harness's Rollout with its template (and, unless kept, its selector) replaced by a reference. */
function referencing(
  name: string,
  ref: { apiVersion: string; kind: string; name: string },
  keepSelector: boolean,
): Record<string, unknown> {
  const object = testRollout({
    name,
    replicas: 2,
    steps: [{ setWeight: 50 }, { pause: { duration: '5s' } }],
  });
  const { template: _template, selector, ...spec } = object.spec as Record<string, unknown>;
  return {
    ...object,
    spec: { ...spec, ...(keepSelector ? { selector } : {}), workloadRef: ref },
  };
}

describe('workloadRef to a PodTemplate or a ReplicaSet on the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => harness.stop());

  it("PodTemplate: the rollout runs the PodTemplate's template, and a change of it is rolled out by the steps", async () => {
    const name = 'from-template';
    await harness.clients.core.createNamespacedPodTemplate({
      namespace: NAMESPACE,
      body: {
        metadata: { name, namespace: NAMESPACE },
        template: { metadata: { labels: { app: name } }, spec: podSpec('shop:1') },
      },
    });
    const key = await harness.createRollout(
      referencing(name, { apiVersion: 'v1', kind: 'PodTemplate', name }, true),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    let observed = await harness.observe(key);
    const first = observed.rollout.status?.stableRS;
    expect(observed.rollout.spec.template.spec.containers[0]!.image).toBe('shop:1');
    expect(
      JSON.stringify(observed.replicaSets.find((rs) => rs.podTemplateHash === first)?.template),
    ).toContain('shop:1');
    expect(observed.rollout.status?.conditions?.some((c) => c.reason === 'InvalidSpec')).toBe(false);

    // The PodTemplate changes: a new revision, through the canary's pause, to stable.
    await harness.clients.core.patchNamespacedPodTemplate(
      { namespace: NAMESPACE, name, body: { template: { spec: podSpec('shop:2') } } },
      MERGE_PATCH,
    );
    await harness.runUntil(
      key,
      (o) => o.rollout.status?.currentPodHash !== first && o.rollout.status?.phase === 'Paused',
      { timeoutMs: 30_000 },
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    observed = await harness.observe(key);
    const stable = observed.replicaSets.find(
      (rs) => rs.podTemplateHash === observed.rollout.status?.stableRS,
    );
    expect(observed.rollout.status?.stableRS).not.toBe(first);
    expect(JSON.stringify(stable?.template)).toContain('shop:2');
    expect(harness.violations).toEqual([]);
  });

  it("ReplicaSet: the rollout runs its template under its selector; the ReplicaSet's own pods are left as they are", async () => {
    const name = 'from-replicaset';
    await harness.clients.apps.createNamespacedReplicaSet({
      namespace: NAMESPACE,
      body: {
        metadata: { name, namespace: NAMESPACE },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: podSpec('shop:7') },
        },
      },
    });
    // No selector on the Rollout: the ReplicaSet's stands in for it.
    const key = await harness.createRollout(
      referencing(name, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name }, false),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const observed = await harness.observe(key);
    expect(observed.rollout.spec.selector).toEqual({ matchLabels: { app: name } });
    expect(observed.replicaSets.map((rs) => rs.name)).not.toContain(name);
    const stable = observed.replicaSets.find(
      (rs) => rs.podTemplateHash === observed.rollout.status?.stableRS,
    );
    expect(stable?.name).not.toBe(name);
    expect(stable?.replicas).toBe(2);
    expect(JSON.stringify(stable?.template)).toContain('shop:7');
    // The referenced ReplicaSet: untouched, not owned, still its own 3 pods.
    const source = await harness.clients.apps.readNamespacedReplicaSet({ namespace: NAMESPACE, name });
    expect(source.spec?.replicas).toBe(3);
    expect(source.metadata?.ownerReferences ?? []).toEqual([]);
    expect(source.metadata?.labels?.['rollouts-pod-template-hash']).toBeUndefined();
    expect(harness.violations).toEqual([]);
  });

  it('a referenced PodTemplate that does not exist: the rollout waits, naming it', async () => {
    const name = 'no-template';
    const key = await harness.createRollout(
      referencing(name, { apiVersion: 'v1', kind: 'PodTemplate', name }, true),
    );
    await harness.reconcile(key);
    const observed = await harness.observe(key);
    expect(observed.replicaSets).toEqual([]);
    expect(observed.rollout.status?.conditions?.find((c) => c.type === 'InvalidSpec')?.message).toBe(
      `workloadRef not found: PodTemplate "${name}" does not exist in namespace "${NAMESPACE}"; the rollout waits for it`,
    );
  });
});
