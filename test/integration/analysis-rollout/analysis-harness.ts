// Test harness: the reconcile harness plus AnalysisRuns measured as the reconcile worker does (runs first, then the rollout).
import type { MetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import type { AnalysisRun } from '../../../src/manifest/analysis.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import type { ReconcileOutcome } from '../../../src/reconciler/reconcile-rollout.ts';
import { reconcileRolloutWithAnalysis } from '../../../src/reconciler/reconcile-with-analysis.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { NAMESPACE, ReconcileHarness } from '../reconcile/reconcile-harness.ts';

export { NAMESPACE, ReconcileHarness };

/** An AnalysisTemplate in the cluster, in the harness's group (rollgate.dev unless started with `api`). */
export async function createAnalysisTemplate(
  harness: ReconcileHarness,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await harness.clients.custom.createNamespacedCustomObject({
    group: harness.api.group,
    version: harness.api.version,
    namespace: NAMESPACE,
    plural: harness.api.plurals.analysisTemplates,
    body: { apiVersion: harness.api.apiVersion, kind: 'AnalysisTemplate', metadata: { name }, spec },
  });
}

/** The AnalysisRuns owned by the rollout (ownerReference uid), in the harness's group, oldest first. */
export async function analysisRunsOf(harness: ReconcileHarness, key: RolloutKey): Promise<AnalysisRun[]> {
  const rollout = await harness.rollout(key);
  const uid = (rollout.metadata as { uid?: string }).uid;
  const list = (await harness.clients.custom.listNamespacedCustomObject({
    group: harness.api.group,
    version: harness.api.version,
    namespace: key.namespace,
    plural: harness.api.plurals.analysisRuns,
  })) as { items: AnalysisRun[] };
  return list.items.filter((run) => {
    const owners = (run.metadata as { ownerReferences?: Array<{ uid?: string }> }).ownerReferences;
    return (owners ?? []).some((ref) => ref.uid === uid);
  });
}

/** One reconcile job as the worker runs it: runs measured, then the rollout (with the harness' invariant checks). */
export async function reconcileWithAnalysis(
  harness: ReconcileHarness,
  key: RolloutKey,
  providers?: MetricProviderRegistry,
): Promise<ReconcileOutcome> {
  return reconcileRolloutWithAnalysis(key, {
    ...harness.deps(),
    reconcile: (k) => harness.reconcile(k),
    ...(providers && { providers }),
  });
}

/**
 * Drives the rollout like the queue would: one job, then fake time passes until its requeue or retry (at most
 * `stepMs`, at least 100 ms), until `done(observed)` or `timeoutMs` of fake time.
 * Returns the fake milliseconds it took.
 */
export async function driveUntil(
  harness: ReconcileHarness,
  key: RolloutKey,
  done: (observed: ObservedState) => boolean,
  options: { timeoutMs?: number; stepMs?: number; providers?: MetricProviderRegistry } = {},
): Promise<number> {
  const start = harness.clock.now().getTime();
  const timeoutMs = options.timeoutMs ?? 120_000;
  const stepMs = options.stepMs ?? 5_000;
  for (;;) {
    const outcome = await harness.job(key, () => reconcileWithAnalysis(harness, key, options.providers));
    const observed = harness.lastObserved.get(`${key.namespace}/${key.name}`);
    if (observed === undefined) throw new Error(`rollout ${key.name} was not observed`);
    if (done(observed)) return harness.clock.now().getTime() - start;
    const elapsed = harness.clock.now().getTime() - start;
    if (elapsed > timeoutMs)
      throw new Error(
        `not done after ${elapsed} ms of fake time; status ${JSON.stringify(observed.rollout.status)}; runs ${JSON.stringify(observed.analysisRuns)}; last outcome ${JSON.stringify(outcome)}`,
      );
    const wait = 'afterMs' in outcome ? Math.min(Math.max(outcome.afterMs, 100), stepMs) : stepMs;
    await harness.sandbox.advance(wait);
  }
}
