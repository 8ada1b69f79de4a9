// canary.replicaProgressThreshold, canary.scaleDownDelayRevisionLimit and spec.rollbackWindow end to end against
// the sandbox: each scenario runs beside the same rollout without the field, and the two end differently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import {
  SCALE_DOWN_DEADLINE_ANNOTATION,
  podTemplateHash,
  type ObservedState,
} from '../../../src/rollout/index.ts';
import { ReconcileHarness, isFullyPromoted, testRollout, NAMESPACE } from './reconcile-harness.ts';

/** The hash the rollout's template runs under now. */
const currentHash = (observed: ObservedState): string =>
  podTemplateHash(observed.rollout.spec.template, observed.rollout.status?.collisionCount);

describe('Argo canary fields Rollgate honours, against the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 31 });
  });
  afterAll(async () => harness.stop());

  /** Moves the live template of `key` to `image` (nothing else changes: an earlier image is that revision again). */
  async function setImage(key: RolloutKey, image: string): Promise<void> {
    const live = await harness.rollout(key);
    const template = structuredClone(live.spec.template) as {
      spec: { containers: Array<{ image: string }> };
    };
    (template.spec.containers[0] as { image: string }).image = image;
    await harness.patchSpec(key, { template });
  }

  /** Creates `object`, drives it to its first full promotion, then moves its template to `image`. */
  async function deployThenUpdate(object: Record<string, unknown>, image: string): Promise<RolloutKey> {
    const key = await harness.createRollout(object);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    await setImage(key, image);
    return key;
  }

  /** Drives `key` until `done`, or for `ms` of fake time. */
  async function runFor(key: RolloutKey, ms: number, done: (o: ObservedState) => boolean) {
    const until = harness.clock.now().getTime() + ms;
    await harness.runUntil(key, (observed) => done(observed) || harness.clock.now().getTime() >= until, {
      timeoutMs: ms + 10_000,
    });
  }
  const promoted = (o: ObservedState) => o.rollout.status?.stableRS === currentHash(o);

  /**
   * app:1 → app:2 over 4 pods, steps [setWeight 50]; the first canary pod never becomes ready (its node
   * cannot run it, say). Returns the rollout once `done`, or after a minute of fake time.
   */
  async function withOneCanaryPodNeverReady(
    name: string,
    canary: Record<string, unknown>,
    done: (o: ObservedState) => boolean,
  ) {
    const object = testRollout({ name, replicas: 4, steps: [{ setWeight: 50 }] });
    const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
    Object.assign(spec.strategy.canary, canary);
    const key = await deployThenUpdate(object, 'app:2');
    // Stop as soon as the canary's first pod exists, before the sandbox makes it ready.
    await harness.runUntil(key, (o) => o.pods.some((pod) => pod.podTemplateHash === currentHash(o)), {
      timeoutMs: 30_000,
    });
    const observed = await harness.observe(key);
    const first = observed.pods.find((pod) => pod.podTemplateHash === currentHash(observed));
    await harness.clients.core.patchNamespacedPod(
      {
        name: first?.name ?? '',
        namespace: NAMESPACE,
        body: { metadata: { annotations: { 'sandbox.rollgate.dev/behavior': 'never-ready' } } },
      },
      MERGE_PATCH,
    );
    await runFor(key, 60_000, done);
    return { key, observed: await harness.observe(key) };
  }

  it('replicaProgressThreshold: with a canary pod that never becomes ready, Percent 50 promotes; without it the step waits', async () => {
    const withIt = await withOneCanaryPodNeverReady(
      'threshold',
      { replicaProgressThreshold: { type: 'Percent', value: 50 } },
      promoted,
    );
    const hash = currentHash(withIt.observed);
    expect(withIt.observed.rollout.status).toMatchObject({ stableRS: hash, currentStepIndex: 1 });
    const canary = withIt.observed.replicaSets.find((rs) => rs.podTemplateHash === hash);
    // Promoted before every pod is available (the never-ready one never will be).
    expect(canary?.replicas).toBe(4);
    expect(canary?.status.availableReplicas).toBeGreaterThanOrEqual(2);
    expect(canary?.status.availableReplicas).toBeLessThan(4);

    const without = await withOneCanaryPodNeverReady('all-pods', {}, () => false);
    const status = without.observed.rollout.status ?? {};
    expect(status.stableRS).not.toBe(currentHash(without.observed));
    expect(status.currentStepIndex).toBe(0);
    const waiting = without.observed.replicaSets.find(
      (rs) => rs.podTemplateHash === currentHash(without.observed),
    );
    expect(waiting).toMatchObject({ replicas: 2, status: { availableReplicas: 1 } });
    expect(harness.violations).toEqual([]);
  }, 120_000);

  /**
   * app:1 → app:2 → app:3, no steps, scaleDownDelaySeconds 120 and room for every revision (maxSurge 4):
   * when app:3 completes, app:1 and app:2 are both within their delay. Returns the state then, and the
   * deadline app:1 was given.
   */
  async function threeRevisions(name: string, canary: Record<string, unknown>) {
    const object = testRollout({ name, replicas: 2, steps: [], scaleDownDelaySeconds: 120, maxSurge: 4 });
    Object.assign((object.spec as { strategy: { canary: Record<string, unknown> } }).strategy.canary, canary);
    const key = await deployThenUpdate(object, 'app:2');
    const first = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    await harness.runUntil(key, promoted, { timeoutMs: 30_000 });
    const v1 = (await harness.observe(key)).replicaSets.find((rs) => rs.podTemplateHash === first);
    const deadline = Date.parse(v1?.annotations[SCALE_DOWN_DEADLINE_ANNOTATION] ?? '');
    expect(v1?.replicas).toBe(2);
    await setImage(key, 'app:3');
    await harness.runUntil(key, promoted, { timeoutMs: 30_000 });
    // One more pass: what the completion leaves behind is scaled on the next.
    await harness.reconcile(key);
    const observed = await harness.observe(key);
    return { observed, first, deadline };
  }

  it('scaleDownDelayRevisionLimit 1: the older of two revisions in their delay goes at once; without it both wait', async () => {
    const limited = await threeRevisions('limited', { scaleDownDelayRevisionLimit: 1 });
    expect(harness.clock.now().getTime()).toBeLessThan(limited.deadline);
    const v1 = limited.observed.replicaSets.find((rs) => rs.podTemplateHash === limited.first);
    expect(v1?.replicas).toBe(0);
    const waiting = limited.observed.replicaSets.filter(
      (rs) => rs.podTemplateHash !== currentHash(limited.observed) && rs.replicas > 0,
    );
    expect(waiting).toHaveLength(1);
    expect(waiting[0]?.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]).toBeDefined();

    const unlimited = await threeRevisions('unlimited', {});
    expect(harness.clock.now().getTime()).toBeLessThan(unlimited.deadline);
    const kept = unlimited.observed.replicaSets.find((rs) => rs.podTemplateHash === unlimited.first);
    expect(kept?.replicas).toBe(2);
    expect(harness.violations).toEqual([]);
  }, 120_000);

  /**
   * app:1.0 → app:2 through [setWeight 50, pause 10s], then back to app:1.0 (whose ReplicaSet is kept by
   * revisionHistoryLimit). Returns what the rollback went through until it was fully promoted, or paused.
   */
  async function rollback(name: string, rollbackWindow: Record<string, unknown> | undefined) {
    const object = testRollout({
      name,
      replicas: 2,
      steps: [{ setWeight: 50 }, { pause: { duration: '10s' } }],
    });
    if (rollbackWindow !== undefined)
      (object.spec as Record<string, unknown>).rollbackWindow = rollbackWindow;
    const key = await deployThenUpdate(object, 'app:2');
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    await setImage(key, 'app:1.0');
    const phases = new Set<string>();
    const stepIndexes = new Set<number>();
    await harness.runUntil(
      key,
      (o) => {
        const status = o.rollout.status ?? {};
        if (status.phase !== undefined) phases.add(status.phase);
        if (status.currentStepIndex !== undefined) stepIndexes.add(status.currentStepIndex);
        return isFullyPromoted(o) || status.phase === 'Paused';
      },
      { timeoutMs: 60_000 },
    );
    const events = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    const reasons = events.items.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
    return { observed: await harness.observe(key), phases, stepIndexes, reasons };
  }

  it('rollbackWindow: a rollback to the revision before the stable skips the steps and the pause; without it the steps run again', async () => {
    const fast = await rollback('window', { revisions: 1 });
    expect(isFullyPromoted(fast.observed)).toBe(true);
    expect(fast.phases.has('Paused')).toBe(false);
    expect([...fast.stepIndexes]).toEqual([2]);
    expect(fast.reasons).toContain('SkipSteps');

    const slow = await rollback('no-window', undefined);
    expect(slow.observed.rollout.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
    expect(slow.reasons).not.toContain('SkipSteps');
    expect(harness.violations).toEqual([]);
  }, 120_000);
});
