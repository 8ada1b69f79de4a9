// One reconcile job for a rollout: measure its AnalysisRuns, then reconcile the rollout, and combine when to look again.
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import type { MetricProviderRegistry } from '../analysis/providers/metric-provider.ts';
import {
  ANALYSIS_RETRY_MS,
  reconcileAnalysisRuns,
  type AnalysisRunsOutcome,
} from './analysis-run-reconciler.ts';
import type { RolloutKey } from './observed-state-reader.ts';
import { reconcileRollout, type ReconcileDeps, type ReconcileOutcome } from './reconcile-rollout.ts';

/** {@link ReconcileDeps} plus what measuring needs (both default to the cluster-backed ones). */
export interface ReconcileWithAnalysisDeps extends ReconcileDeps {
  providers?: MetricProviderRegistry;
  resolveSecret?: SecretResolver;
  /** The rollout reconcile to call (tests wrap it); defaults to {@link reconcileRollout}. */
  reconcile?: (key: RolloutKey, deps: ReconcileDeps) => Promise<ReconcileOutcome>;
}

/** Analysis → rollout rounds per call: enough to measure a run the rollout just created and act on it. */
export const MAX_ANALYSIS_ROUNDS = 3;

/**
 * The earlier of the rollout's outcome and the analysis side's requeue: `done` or a later requeue
 * becomes a requeue at `analysisAfterMs`; `stalled` stays stalled (a human must act on the rollout).
 */
export function withAnalysisRequeue(
  outcome: ReconcileOutcome,
  analysisAfterMs: number | undefined,
): ReconcileOutcome {
  if (analysisAfterMs === undefined || outcome.kind === 'stalled') return outcome;
  if (outcome.kind === 'requeue' && outcome.afterMs <= analysisAfterMs) return outcome;
  return {
    kind: 'requeue',
    afterMs: analysisAfterMs,
    reason: 'analysis',
    ...(outcome.stats && { stats: outcome.stats }),
  };
}

/**
 * Measures the rollout's unfinished AnalysisRuns and writes their status, then reconciles the
 * rollout, so a run's new phase reaches the planner in the same job. When the rollout reconcile
 * wrote something (it may have created a run), the runs are measured again and, if a status
 * changed, the rollout is reconciled again: at most {@link MAX_ANALYSIS_ROUNDS} rounds. A failure on
 * the analysis side never blocks the rollout reconcile: it is logged and retried after a short delay.
 * @returns the rollout's outcome with the earliest requeue of both sides; stats summed over rounds.
 */
export async function reconcileRolloutWithAnalysis(
  key: RolloutKey,
  deps: ReconcileWithAnalysisDeps,
): Promise<ReconcileOutcome> {
  const reconcile = deps.reconcile ?? reconcileRollout;
  const analysisDeps = {
    clients: deps.clients,
    clock: deps.clock,
    logger: deps.logger,
    ...(deps.providers && { providers: deps.providers }),
    ...(deps.resolveSecret && { resolveSecret: deps.resolveSecret }),
  };
  const measure = async (): Promise<AnalysisRunsOutcome> => {
    try {
      return await reconcileAnalysisRuns(key, analysisDeps);
    } catch (err) {
      deps.logger.warn(
        { rollout: `${key.namespace}/${key.name}`, err: (err as Error).message },
        'could not reconcile AnalysisRuns; retrying soon',
      );
      return { requeueAfterMs: ANALYSIS_RETRY_MS * 5, written: [], conflicts: [] };
    }
  };

  let analysis = await measure();
  let outcome = await reconcile(key, deps);
  const stats = outcome.stats && { ...outcome.stats };
  for (let round = 1; round < MAX_ANALYSIS_ROUNDS; round++) {
    if (outcome.kind === 'stalled' || (outcome.stats?.writes ?? 0) === 0) break;
    analysis = await measure();
    if (analysis.written.length === 0) break;
    outcome = await reconcile(key, deps);
    if (stats && outcome.stats) {
      stats.passes += outcome.stats.passes;
      stats.writes += outcome.stats.writes;
      stats.conflicts += outcome.stats.conflicts;
      stats.transientErrors += outcome.stats.transientErrors;
    }
  }
  const combined = withAnalysisRequeue(outcome, analysis.requeueAfterMs);
  return stats ? { ...combined, stats } : combined;
}
