// F3: old ReplicaSets are always scaled down; the scale-down-deadline annotation is never written empty, even under conflicts.
import { Watch, type V1ReplicaSet } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { eventually } from '../../support/eventually.ts';
import {
  DRIVEN_APIS,
  ReconcileHarness,
  isFullyPromoted,
  testRollout,
  NAMESPACE,
} from './reconcile-harness.ts';

const RESYNC_MS = 5_000;
const DEADLINE = 'rollgate.dev/scale-down-deadline';

// In both groups: the failure happened under Argo Rollouts, so it is held for argoproj.io Rollouts too.
describe.each(DRIVEN_APIS)('F3: old ReplicaSets are scaled down ($group)', ({ api }) => {
  let harness: ReconcileHarness;
  let stopWatch: (() => void) | undefined;
  /** Every value of the annotation seen on any ReplicaSet event, from the API's own watch stream. */
  const seenValues: string[] = [];
  /** Pod template hashes of the ReplicaSets the watch has seen at 0 replicas. */
  const seenAtZero = new Set<string>();
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 3, api });
    const watch = new Watch(harness.clients.kubeConfig);
    const controller = await watch.watch(
      `/apis/apps/v1/namespaces/${NAMESPACE}/replicasets`,
      {},
      (_type: string, object: V1ReplicaSet) => {
        const value = object.metadata?.annotations?.[DEADLINE];
        if (value !== undefined) seenValues.push(value);
        const hash = object.metadata?.labels?.['rollouts-pod-template-hash'];
        if (hash !== undefined && object.spec?.replicas === 0) seenAtZero.add(hash);
      },
      () => undefined,
    );
    stopWatch = () => controller.abort();
  });
  afterAll(async () => {
    stopWatch?.();
    await harness.stop();
  });

  it('completes under 30% conflicts and scales the old ReplicaSet to 0 within scaleDownDelaySeconds + one resync', async () => {
    const key = await harness.createRollout(
      testRollout({
        name: 'f3',
        replicas: 3,
        scaleDownDelaySeconds: 5,
        steps: [{ setWeight: 50 }, { pause: { duration: '2s' } }],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const oldHash = (await harness.observe(key)).rollout.status?.stableRS;

    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'f3' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    harness.sandbox.faults.conflictRate = 0.3;
    let completedAt: number | undefined;
    const oldScaledDown = (observed: ObservedState): boolean => {
      const status = observed.rollout.status ?? {};
      if (completedAt === undefined && status.stableRS !== undefined && status.stableRS !== oldHash)
        completedAt = harness.clock.now().getTime();
      const old = observed.replicaSets.find((rs) => rs.podTemplateHash === oldHash);
      return (
        completedAt !== undefined && old !== undefined && old.replicas === 0 && old.status.replicas === 0
      );
    };
    await harness.runUntil(key, oldScaledDown, { timeoutMs: 120_000, stepMs: 500 });
    harness.sandbox.faults.conflictRate = 0;
    if (completedAt === undefined) throw new Error('never completed');
    expect(harness.clock.now().getTime() - completedAt).toBeLessThanOrEqual(5_000 + RESYNC_MS);
    expect(harness.conflicts).toBeGreaterThan(0);
    // The watch has caught up with the scale-down (the last write the test looks at) before its values are read.
    await eventually('the watch to see the old ReplicaSet at 0', () => seenAtZero.has(oldHash ?? ''), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(seenValues.length).toBeGreaterThan(0);
    expect(seenValues.filter((value) => value === '' || Number.isNaN(Date.parse(value)))).toEqual([]);
    expect(harness.violations).toEqual([]);
  });

  it('scales down, on the next reconcile, a ReplicaSet seeded with an empty deadline and running pods', async () => {
    const key = await harness.createRollout(testRollout({ name: 'f3-seeded', replicas: 2 }));
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const rollout = await harness.rollout(key);
    const uid = (rollout.metadata as { uid: string }).uid;
    const hash = 'seeded1';
    await harness.clients.apps.createNamespacedReplicaSet({
      namespace: NAMESPACE,
      body: {
        metadata: {
          name: `f3-seeded-${hash}`,
          labels: { app: 'f3-seeded', 'rollouts-pod-template-hash': hash },
          annotations: { [DEADLINE]: '' },
          ownerReferences: [
            {
              apiVersion: api.apiVersion,
              kind: 'Rollout',
              name: 'f3-seeded',
              uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'f3-seeded', 'rollouts-pod-template-hash': hash } },
          template: {
            metadata: { labels: { app: 'f3-seeded', 'rollouts-pod-template-hash': hash } },
            spec: { containers: [{ name: 'app', image: 'app:0.9' }] },
          },
        },
      },
    });
    await harness.sandbox.advance(2_000);
    const before = await harness.observe(key);
    expect(before.pods.filter((pod) => pod.podTemplateHash === hash)).toHaveLength(2);

    await harness.reconcile(key);
    const live = await harness.clients.apps.readNamespacedReplicaSet({
      namespace: NAMESPACE,
      name: `f3-seeded-${hash}`,
    });
    expect(live.spec?.replicas).toBe(0);
    const repaired = live.metadata?.annotations?.[DEADLINE];
    if (repaired !== undefined) expect(Number.isNaN(Date.parse(repaired))).toBe(false);
    const after = await harness.observe(key);
    expect(after.pods.filter((pod) => pod.podTemplateHash === hash)).toHaveLength(0);
    const events = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    expect(events.items.some((e) => e.involvedObject.name === 'f3-seeded' && e.type === 'Warning')).toBe(
      true,
    );
  });
});
