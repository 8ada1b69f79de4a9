// Handing a canary Argo Rollouts left paused at setWeight 40 to Rollgate (sandbox): no pod restarted, it continues at its step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { DRIVEN_GROUPS, drivenApiOf } from '../../../src/manifest/driven-api.ts';
import { POD_TEMPLATE_HASH_LABEL, podTemplateHash, type ObservedState } from '../../../src/rollout/index.ts';
import {
  ARGO_CANARY_HASH,
  ARGO_STABLE_HASH,
  HANDOVER_CANARY_REPLICAS,
  HANDOVER_REPLICAS,
  HANDOVER_STABLE_REPLICAS,
  HANDOVER_STEPS,
  argoReplicaSetManifest,
  argoStatusAtPause,
  handoverRolloutManifest,
  handoverTemplate,
} from '../../builders/argo-handover.ts';
import { NAMESPACE, ReconcileHarness } from './reconcile-harness.ts';

const NAME = 'web';
const key = { namespace: NAMESPACE, name: NAME };

// Argo's own group (controller mode: the Rollout Argo ran is driven where it is), and Rollgate's.
describe.each(DRIVEN_GROUPS)('%s', (GROUP) => {
  const ROLLOUTS = { group: GROUP, version: 'v1alpha1', plural: 'rollouts', namespace: NAMESPACE };
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 29, api: drivenApiOf(GROUP) });
  });
  afterAll(async () => harness?.stop());

  async function rollout(): Promise<{ status?: Record<string, unknown> }> {
    return (await harness.clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, name: NAME })) as {
      status?: Record<string, unknown>;
    };
  }

  async function podUids(): Promise<Map<string, string>> {
    const pods = await harness.clients.core.listNamespacedPod({
      namespace: NAMESPACE,
      labelSelector: `app=${NAME}`,
    });
    return new Map(
      pods.items
        .filter((pod) => pod.metadata?.deletionTimestamp == null)
        .map((pod) => [pod.metadata?.uid ?? '', pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? '']),
    );
  }

  async function replicaSetNames(): Promise<string[]> {
    const list = await harness.clients.apps.listNamespacedReplicaSet({ namespace: NAMESPACE });
    return list.items.map((rs) => rs.metadata?.name ?? '').sort();
  }

  async function selectorHash(service: string): Promise<string | undefined> {
    const live = await harness.clients.core.readNamespacedService({ namespace: NAMESPACE, name: service });
    return live.spec?.selector?.[POD_TEMPLATE_HASH_LABEL];
  }

  async function promote(): Promise<void> {
    await harness.clients.custom.patchNamespacedCustomObjectStatus(
      { ...ROLLOUTS, name: NAME, body: { status: { pauseConditions: null } } },
      MERGE_PATCH,
    );
  }

  /** Healthy on `hash`, all its pods available, every other ReplicaSet at zero. */
  const completedOn =
    (hash: string) =>
    (observed: ObservedState): boolean => {
      const status = observed.rollout.status ?? {};
      const stable = observed.replicaSets.find((rs) => rs.podTemplateHash === hash);
      return (
        status.phase === 'Healthy' &&
        status.stableRS === hash &&
        status.currentPodHash === hash &&
        stable?.status.availableReplicas === HANDOVER_REPLICAS &&
        observed.replicaSets.every((rs) => rs === stable || rs.status.replicas === 0)
      );
    };

  describe('taking over a canary Argo Rollouts left paused at setWeight 40', () => {
    it('restarts no pod, stays at the pause, completes on promote, and runs a later revision as usual', async () => {
      // What Argo left: its Services, the Rollout with its status, its two ReplicaSets and their pods.
      for (const [service, hash] of [
        [`${NAME}-stable`, ARGO_STABLE_HASH],
        [`${NAME}-canary`, ARGO_CANARY_HASH],
      ] as const)
        await harness.createService(service, { app: NAME, [POD_TEMPLATE_HASH_LABEL]: hash });
      const created = (await harness.clients.custom.createNamespacedCustomObject({
        ...ROLLOUTS,
        body: handoverRolloutManifest({ apiVersion: `${GROUP}/v1alpha1`, name: NAME, image: 'app:2' }),
      })) as { metadata: { uid: string } };
      const owner = { apiVersion: `${GROUP}/v1alpha1`, name: NAME, uid: created.metadata.uid };
      for (const [image, hash, replicas, revision] of [
        ['app:1', ARGO_STABLE_HASH, HANDOVER_STABLE_REPLICAS, 1],
        ['app:2', ARGO_CANARY_HASH, HANDOVER_CANARY_REPLICAS, 2],
      ] as const)
        await harness.clients.apps.createNamespacedReplicaSet({
          namespace: NAMESPACE,
          body: argoReplicaSetManifest({ rollout: owner, image, hash, replicas, revision }),
        });
      const pausedAt = new Date(harness.clock.now().getTime() - 600_000).toISOString();
      await harness.clients.custom.patchNamespacedCustomObjectStatus(
        { ...ROLLOUTS, name: NAME, body: { status: argoStatusAtPause(pausedAt, NAME) } },
        MERGE_PATCH,
      );
      await harness.sandbox.settle();
      await harness.sandbox.advance(2_000);
      const before = await podUids();
      expect([...before.values()].sort()).toEqual(
        [
          ...Array<string>(HANDOVER_STABLE_REPLICAS).fill(ARGO_STABLE_HASH),
          ...Array<string>(HANDOVER_CANARY_REPLICAS).fill(ARGO_CANARY_HASH),
        ].sort(),
      );
      const argoSets = await replicaSetNames();

      // Rollgate takes over: thirty seconds of passes leave it where Argo left it.
      const start = harness.clock.now().getTime();
      await harness.runUntil(key, () => harness.clock.now().getTime() - start >= 30_000, {
        timeoutMs: 60_000,
      });
      const paused = (await rollout()).status ?? {};
      expect(paused).toMatchObject({
        phase: 'Paused',
        currentStepIndex: 1,
        currentPodHash: ARGO_CANARY_HASH,
        stableRS: ARGO_STABLE_HASH,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: pausedAt }],
      });
      expect(await podUids()).toEqual(before);
      expect(await replicaSetNames()).toEqual(argoSets);
      expect(await selectorHash(`${NAME}-canary`)).toBe(ARGO_CANARY_HASH);
      expect(await selectorHash(`${NAME}-stable`)).toBe(ARGO_STABLE_HASH);

      // Promote: the canary ReplicaSet Argo made becomes the stable one, its pods kept.
      await promote();
      await harness.runUntil(key, completedOn(ARGO_CANARY_HASH), { timeoutMs: 120_000 });
      const after = await podUids();
      for (const [uid, hash] of before)
        if (hash === ARGO_CANARY_HASH) expect(after.get(uid), `canary pod ${uid}`).toBe(ARGO_CANARY_HASH);
      expect(await replicaSetNames()).toEqual(argoSets);
      expect(await selectorHash(`${NAME}-stable`)).toBe(ARGO_CANARY_HASH);
      expect((await rollout()).status).toMatchObject({ currentStepIndex: HANDOVER_STEPS.length });

      // A later revision: a ReplicaSet of Rollgate's own, the canary walk as usual.
      const own = podTemplateHash(handoverTemplate('app:3', NAME));
      await harness.clients.custom.patchNamespacedCustomObject(
        { ...ROLLOUTS, name: NAME, body: { spec: { template: handoverTemplate('app:3', NAME) } } },
        MERGE_PATCH,
      );
      await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 120_000 });
      expect((await rollout()).status).toMatchObject({
        currentStepIndex: 1,
        currentPodHash: own,
        stableRS: ARGO_CANARY_HASH,
      });
      expect(await replicaSetNames()).toEqual([...argoSets, `${NAME}-${own}`].sort());
      await promote();
      await harness.runUntil(key, completedOn(own), { timeoutMs: 120_000 });
      expect(harness.violations).toEqual([]);
    });
  });
});
