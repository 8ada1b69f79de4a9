// One reconcile job for a rollout: measure its AnalysisRuns, then reconcile the rollout, and combine when to look again.
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import type { MetricProviderRegistry } from '../analysis/providers/metric-provider.ts';
import { nextLook } from '../clock/next-look.ts';
import { reconcileAnalysisRuns, type AnalysisRunsOutcome } from './analysis-run-reconciler.ts';
import { KubeThrottledError } from '../kube/errors.ts';
import { ReadPolicy } from './read-policy.ts';
import type { RolloutKey } from './observed-state-reader.ts';
import { ReconcileRetryError } from './reconcile-retry-error.ts';
import {
  reconcileRollout,
  type ReconcileDeps,
  type ReconcileOutcome,
  type ReconcileStats,
} from './reconcile-rollout.ts';

/** {@link ReconcileDeps} plus what measuring needs (both default to the cluster-backed ones). */
export interface ReconcileWithAnalysisDeps extends ReconcileDeps {
  providers?: MetricProviderRegistry;
  resolveSecret?: SecretResolver;
  /** The rollout reconcile to call (tests wrap it); defaults to {@link reconcileRollout}. */
  reconcile?: (key: RolloutKey, deps: ReconcileDeps) => Promise<ReconcileOutcome>;
}

/**
 * Analysis → rollout rounds per call: enough to measure a run the rollout just created and act on it,
 * or to measure again at once a run whose status write lost a race (409).
 */
export const MAX_ANALYSIS_ROUNDS = 3;

/** The reason a requeue for the analysis side gives. */
export const ANALYSIS_REASON = 'analysis';

/**
 * When to look again, from both sides: the rollout's requeue and the analysis side's `requeueAfterMs`
 * (a run's next measurement) are both fed into `nextLook` (src/clock/next-look.ts), the rollout's
 * first, so it keeps its reason on a tie. `done` with an analysis time becomes a requeue at it;
 * `stalled` stays stalled (a human must act on the rollout).
 */
export function withAnalysisRequeue(
  outcome: ReconcileOutcome,
  analysisAfterMs: number | undefined,
): ReconcileOutcome {
  if (analysisAfterMs === undefined || outcome.kind === 'stalled') return outcome;
  const look = nextLook([
    outcome.kind === 'requeue' ? { afterMs: outcome.afterMs, reason: outcome.reason } : undefined,
    { afterMs: analysisAfterMs, reason: ANALYSIS_REASON },
  ]);
  if (look === undefined) return outcome;
  return {
    kind: 'requeue',
    afterMs: look.afterMs,
    reason: look.reason,
    ...(outcome.stats && { stats: outcome.stats }),
  };
}

/** One measurement of the runs: what it wrote and wants, or why it could not. */
type Measured = AnalysisRunsOutcome & { error?: unknown };

function addStats(into: ReconcileStats | undefined, from: ReconcileStats | undefined): void {
  if (!into || !from) return;
  into.passes += from.passes;
  into.writes += from.writes;
  into.conflicts += from.conflicts;
  into.transientErrors += from.transientErrors;
}

/**
 * Measures the rollout's unfinished AnalysisRuns and writes their status, then reconciles the
 * rollout, so a run's new phase reaches the planner in the same job. When the rollout reconcile
 * wrote something (it may have created a run), or a run's status write lost a race (409), the runs
 * are measured again at once and, if a status changed, the rollout is reconciled again: at most
 * {@link MAX_ANALYSIS_ROUNDS} rounds.
 *
 * A failure on the analysis side never blocks the rollout reconcile: it is logged, the rollout is
 * reconciled, and then the call throws {@link ReconcileRetryError} (stage `analysis`) so the queue
 * retries the job with its backoff, as it does a 409 still unresolved after the last round. A
 * rollout reconcile that throws is not caught. The outcome's timing comes from
 * {@link withAnalysisRequeue} alone.
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
    ...(deps.api && { api: deps.api }),
    ...(deps.providers && { providers: deps.providers }),
    ...(deps.resolveSecret && { resolveSecret: deps.resolveSecret }),
    ...(deps.cache && { cache: deps.cache }),
  };
  // One policy for the whole job: every measurement and rollout pass reads the cache once it holds
  // the job's own writes (a run measured Successful must not be read back as Running), and the job
  // starts from what the rollout's previous job, in any process, wrote.
  const reads =
    deps.reads ??
    (await ReadPolicy.forJob({ key, cache: deps.cache, shared: deps.writtenVersions, logger: deps.logger }));
  const measure = async (): Promise<Measured> => {
    try {
      return await reconcileAnalysisRuns(key, { ...analysisDeps, reads });
    } catch (error) {
      deps.logger.warn(
        { rollout: `${key.namespace}/${key.name}`, err: (error as Error).message },
        'could not reconcile AnalysisRuns; the job will be retried',
      );
      return { written: [], conflicts: [], error };
    }
  };

  const shared: ReconcileDeps = { ...deps, reads };
  let analysis = await measure();
  let outcome = await reconcile(key, shared);
  const stats = outcome.stats && { ...outcome.stats };
  for (let round = 1; round < MAX_ANALYSIS_ROUNDS; round++) {
    if (outcome.kind === 'stalled') break;
    if ((outcome.stats?.writes ?? 0) === 0 && analysis.conflicts.length === 0) break;
    analysis = await measure();
    if (analysis.written.length === 0) break;
    outcome = await reconcile(key, shared);
    addStats(stats, outcome.stats);
  }
  if (outcome.kind !== 'stalled' && (analysis.error !== undefined || analysis.conflicts.length > 0)) {
    const cause =
      analysis.error ?? new Error(`AnalysisRuns changed while measured: ${analysis.conflicts.join(', ')}`);
    const retryAfterMs = cause instanceof KubeThrottledError ? cause.retryAfterMs : undefined;
    throw new ReconcileRetryError(
      'analysis',
      stats ?? { passes: 0, writes: 0, conflicts: 0, transientErrors: 0 },
      retryAfterMs,
      { cause },
    );
  }
  const combined = withAnalysisRequeue(outcome, analysis.requeueAfterMs);
  return stats ? { ...combined, stats } : combined;
}
