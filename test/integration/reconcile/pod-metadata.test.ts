// What a revision's pods carry, through the real client and executor against the sandbox: ephemeral labels (canary/stable,
// preview/active) as a query selecting pods by them sees them, swapped in place at promotion; the canary's anti-affinity; a
// matchExpressions selector.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';

const HASH = 'rollouts-pod-template-hash';

function withCanaryFields(
  object: Record<string, unknown>,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  Object.assign(spec.strategy.canary, fields);
  return object;
}

describe('pod metadata on the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => harness.stop());

  /** The pods a `kubectl get pods -l <selector>` lists (a PromQL or dashboard selecting by the label sees the same). */
  async function pods(labelSelector: string): Promise<V1Pod[]> {
    const list = await harness.clients.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector });
    return list.items.filter((pod) => pod.metadata?.deletionTimestamp == null);
  }
  /** The canary invariants' violations for one rollout (blue-green runs both revisions in full: not checked). */
  const violationsOf = (name: string) => harness.violations.filter((v) => v.message.startsWith(`${name}:`));
  const names = (list: V1Pod[]) => list.map((pod) => pod.metadata?.name ?? '').sort();

  async function newImage(key: RolloutKey, image: string): Promise<void> {
    const live = await harness.rollout(key);
    const template = structuredClone(live.spec.template) as {
      spec: { containers: Array<{ image: string }> };
    };
    template.spec.containers[0]!.image = image;
    await harness.patchSpec(key, { template });
  }

  it('canaryMetadata / stableMetadata: pods are selectable by role while the canary runs, relabelled in place once promoted', async () => {
    const key = await harness.createRollout(
      withCanaryFields(
        testRollout({
          name: 'roles',
          replicas: 2,
          steps: [{ setWeight: 50 }, { pause: { duration: '10s' } }],
        }),
        {
          canaryMetadata: { labels: { role: 'canary' }, annotations: { 'example.com/phase': 'canary' } },
          stableMetadata: { labels: { role: 'stable' } },
        },
      ),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const first = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    // A first revision is the stable at once.
    expect((await pods('app=roles,role=stable')).length).toBe(2);

    await newImage(key, 'app:2.0');
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    const second = (await harness.observe(key)).rollout.status?.currentPodHash ?? '';
    expect(second).not.toBe(first);
    const canaries = await pods('app=roles,role=canary');
    expect(canaries.length).toBeGreaterThan(0);
    expect(canaries.every((pod) => pod.metadata?.labels?.[HASH] === second)).toBe(true);
    expect(canaries.every((pod) => pod.metadata?.annotations?.['example.com/phase'] === 'canary')).toBe(true);
    const stables = await pods('app=roles,role=stable');
    expect(stables.length).toBeGreaterThan(0);
    expect(stables.every((pod) => pod.metadata?.labels?.[HASH] === first)).toBe(true);

    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    // Promoted: the canary's pods (the same pods, not restarted) are the stable ones now, without the canary's annotation.
    expect(await pods('app=roles,role=canary')).toEqual([]);
    const promoted = await pods(`app=roles,${HASH}=${second}`);
    expect(names(await pods(`app=roles,role=stable,${HASH}=${second}`))).toEqual(names(promoted));
    expect(names(promoted)).toEqual(expect.arrayContaining(names(canaries)));
    expect(promoted.some((pod) => pod.metadata?.annotations?.['example.com/phase'] !== undefined)).toBe(
      false,
    );
    const rs = (await harness.observe(key)).replicaSets.find(
      (candidate) => candidate.podTemplateHash === second,
    );
    expect(JSON.parse(rs?.annotations['rollout.argoproj.io/ephemeral-metadata'] ?? '{}')).toEqual({
      labels: { role: 'stable' },
    });
    expect(violationsOf('roles')).toEqual([]);
    // Settled: a pass finds every ReplicaSet and pod carrying its role's metadata and writes nothing.
    const noop = await harness.reconcile(key);
    expect(noop.stats?.writes).toBe(0);
  });

  it('blue-green previewMetadata / activeMetadata: the preview pods say so until the switch', async () => {
    await harness.createService('bg-active', { app: 'bg' });
    await harness.createService('bg-preview', { app: 'bg' });
    const object = testRollout({ name: 'bg', replicas: 2 });
    (object.spec as { strategy: unknown }).strategy = {
      blueGreen: {
        activeService: 'bg-active',
        previewService: 'bg-preview',
        autoPromotionSeconds: 10,
        scaleDownDelaySeconds: 0,
        previewMetadata: { labels: { role: 'preview' } },
        activeMetadata: { labels: { role: 'active' } },
      },
    };
    const key = await harness.createRollout(object);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    expect((await pods('app=bg,role=active')).length).toBe(2);

    await newImage(key, 'app:2.0');
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    const second = (await harness.observe(key)).rollout.status?.currentPodHash ?? '';
    const preview = await pods('app=bg,role=preview');
    expect(preview.length).toBe(2);
    expect(preview.every((pod) => pod.metadata?.labels?.[HASH] === second)).toBe(true);

    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    expect(await pods('app=bg,role=preview')).toEqual([]);
    expect(names(await pods(`app=bg,role=active,${HASH}=${second}`))).toEqual(names(preview));
  });

  it('canary antiAffinity: the canary pods keep off the nodes of the stable pods', async () => {
    const key = await harness.createRollout(
      withCanaryFields(
        testRollout({ name: 'apart', replicas: 2, steps: [{ setWeight: 50 }, { pause: {} }] }),
        {
          antiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} },
        },
      ),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const first = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    // The first revision has no stable to keep away from.
    expect((await pods('app=apart')).every((pod) => pod.spec?.affinity === undefined)).toBe(true);

    await newImage(key, 'app:2.0');
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    const second = (await harness.observe(key)).rollout.status?.currentPodHash ?? '';
    const canaries = await pods(`app=apart,${HASH}=${second}`);
    expect(canaries.length).toBeGreaterThan(0);
    for (const pod of canaries)
      expect(pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
        {
          labelSelector: { matchExpressions: [{ key: HASH, operator: 'In', values: [first] }] },
          namespaces: [NAMESPACE],
          topologyKey: 'kubernetes.io/hostname',
        },
      ]);
    expect(violationsOf('apart')).toEqual([]);
  });

  it('selector.matchExpressions: the ReplicaSets select by it, and status.selector (what an HPA reads) says it', async () => {
    const object = testRollout({ name: 'exprs', replicas: 2 });
    (object.spec as { selector: unknown }).selector = {
      matchExpressions: [{ key: 'app', operator: 'In', values: ['exprs'] }],
    };
    const key = await harness.createRollout(object);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const observed = await harness.observe(key);
    expect(observed.rollout.status?.selector).toBe('app in (exprs)');
    const [rs] = (
      await harness.clients.apps.listNamespacedReplicaSet({
        namespace: NAMESPACE,
        labelSelector: 'app=exprs',
      })
    ).items;
    expect(rs?.spec?.selector).toEqual({
      matchLabels: { [HASH]: observed.rollout.status?.stableRS },
      matchExpressions: [{ key: 'app', operator: 'In', values: ['exprs'] }],
    });
    expect((await pods('app=exprs')).length).toBe(2);
  });
});
