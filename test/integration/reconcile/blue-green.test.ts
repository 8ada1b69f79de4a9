// Blue-green through the real client and executor against the sandbox: preview, promote, switch, old scaled down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ReconcileHarness, isFullyPromoted, NAMESPACE } from './reconcile-harness.ts';

const HASH = 'rollouts-pod-template-hash';

const EXAMPLE = fileURLToPath(new URL('../../../examples/rollout-bluegreen.yaml', import.meta.url));

/** The documents of examples/rollout-bluegreen.yaml, in the test namespace. */
function exampleObjects(): Array<Record<string, unknown> & { kind: string; metadata: { name: string } }> {
  return parseAllDocuments(readFileSync(EXAMPLE, 'utf8')).map((doc) => {
    const object = doc.toJS() as Record<string, unknown> & { kind: string; metadata: { name: string } };
    return { ...object, metadata: { ...object.metadata, namespace: NAMESPACE } };
  });
}

describe('blue-green against the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 16 });
  });
  afterAll(async () => harness.stop());

  async function selector(name: string): Promise<string | undefined> {
    return (await harness.clients.core.readNamespacedService({ namespace: NAMESPACE, name })).spec
      ?.selector?.[HASH];
  }

  /** Never: the active Service on a ReplicaSet with no available pod, or one scaled to 0. */
  const activeProblems: string[] = [];
  function checkActive(observed: ObservedState): void {
    const active = observed.services.find((s) => s.name === 'bluegreen-demo-active')?.selector[HASH];
    if (active === undefined) return;
    const rs = observed.replicaSets.find((candidate) => candidate.podTemplateHash === active);
    if (rs === undefined || rs.replicas === 0 || rs.status.availableReplicas === 0)
      activeProblems.push(`active on ${active}: ${JSON.stringify(rs?.status)} replicas ${rs?.replicas}`);
  }

  it('examples/rollout-bluegreen.yaml: previews the new revision, waits for promote, switches, then scales the old one down after its delay', async () => {
    // kubectl apply -f examples/rollout-bluegreen.yaml
    let key = { namespace: NAMESPACE, name: '' };
    for (const object of exampleObjects()) {
      if (object.kind === 'Service')
        await harness.clients.core.createNamespacedService({ namespace: NAMESPACE, body: object });
      else key = await harness.createRollout(object);
    }
    expect(key.name).toBe('bluegreen-demo');
    const started = (observed: ObservedState, done: boolean): boolean => {
      checkActive(observed);
      return done;
    };
    // The first revision has nothing to switch from (the shared steady state): checked from the update on.
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const first = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    expect(await selector('bluegreen-demo-active')).toBe(first);
    expect(await selector('bluegreen-demo-preview')).toBe(first);

    // A new image: the next revision.
    const live = await harness.rollout(key);
    const template = structuredClone(live.spec.template) as {
      spec: { containers: Array<{ image: string }> };
    };
    (template.spec.containers[0] as { image: string }).image = 'ghcr.io/rollgate/web:1.1.0';
    await harness.patchSpec(key, { template });
    await harness.runUntil(key, (o) => started(o, o.rollout.status?.phase === 'Paused'), {
      timeoutMs: 60_000,
    });
    let observed = await harness.observe(key);
    const next = observed.rollout.status?.currentPodHash ?? '';
    expect(next).not.toBe(first);
    expect(observed.rollout.status?.pauseConditions?.[0]?.reason).toBe('BlueGreenPause');
    expect(observed.replicaSets.find((rs) => rs.podTemplateHash === next)?.replicas).toBe(1);
    expect(await selector('bluegreen-demo-preview')).toBe(next);
    expect(await selector('bluegreen-demo-active')).toBe(first);
    // The preview's pod runs but serves nobody: status (and the scale subresource an HPA reads) counts the
    // active ReplicaSet's pods as ready and available, as Argo reports them.
    expect(observed.rollout.status).toMatchObject({
      replicas: 4,
      updatedReplicas: 1,
      readyReplicas: 3,
      availableReplicas: 3,
      HPAReplicas: 3,
    });
    const scale = (await harness.clients.custom.getNamespacedCustomObjectScale({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      plural: 'rollouts',
      ...key,
    })) as { status?: { replicas?: number; selector?: string } };
    expect(scale.status).toEqual({ replicas: 3, selector: `app=bluegreen-demo,${HASH}=${first}` });

    // rollgate promote: the pause condition goes, controllerPause stays.
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
    await harness.runUntil(key, (o) => started(o, o.rollout.status?.phase === 'Healthy'), {
      timeoutMs: 60_000,
    });
    observed = await harness.observe(key);
    expect(observed.rollout.status?.stableRS).toBe(next);
    expect(await selector('bluegreen-demo-active')).toBe(next);
    expect(observed.replicaSets.find((rs) => rs.podTemplateHash === first)?.replicas).toBe(3);
    const took = await harness.runUntil(key, (o) => started(o, isFullyPromoted(o)), { timeoutMs: 60_000 });
    expect(took).toBeGreaterThanOrEqual(29_000); // scaleDownDelaySeconds: 30
    expect(activeProblems).toEqual([]);
    expect(harness.violations.filter((v) => v.message.includes('scale-down-deadline'))).toEqual([]);
  });
});
