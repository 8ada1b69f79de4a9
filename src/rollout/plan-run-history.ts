// Garbage collection of finished AnalysisRuns beyond spec.analysis.{successful,unsuccessful}RunHistoryLimit.
import type { RolloutSpec } from '../manifest/rollout.ts';
import type { ObservedAnalysisRun } from './observed-state.ts';
import { POD_TEMPLATE_HASH_LABEL, type RolloutAction } from './rollout-action.ts';

/** Argo Rollouts' defaults for both limits. */
export const DEFAULT_RUN_HISTORY_LIMIT = 5;

/**
 * The runs to delete: finished runs of earlier revisions, oldest first, beyond the limits (Successful
 * counts against `successfulRunHistoryLimit`; Failed, Error and Inconclusive against
 * `unsuccessfulRunHistoryLimit`). Runs of the current revision are never collected: the planner may be
 * waiting on them (an Inconclusive run holds the rollout paused until a promote or abort, F4).
 */
export function planRunHistory(
  spec: Pick<RolloutSpec, 'analysis'>,
  runs: readonly ObservedAnalysisRun[],
  currentHash: string | undefined,
): RolloutAction[] {
  const limits = {
    successful: spec.analysis?.successfulRunHistoryLimit ?? DEFAULT_RUN_HISTORY_LIMIT,
    unsuccessful: spec.analysis?.unsuccessfulRunHistoryLimit ?? DEFAULT_RUN_HISTORY_LIMIT,
  };
  const older = runs.filter(
    (run) => currentHash === undefined || run.labels[POD_TEMPLATE_HASH_LABEL] !== currentHash,
  );
  // Newest first; a run without a timestamp counts as newest (it is never collected before one that has one).
  const newestFirst = [...older].sort((a, b) =>
    (b.creationTimestamp ?? '\uffff').localeCompare(a.creationTimestamp ?? '\uffff'),
  );
  const pick = (phases: readonly string[], limit: number): ObservedAnalysisRun[] =>
    newestFirst.filter((run) => phases.includes(run.phase)).slice(limit);
  return [
    ...pick(['Successful'], limits.successful),
    ...pick(['Failed', 'Error', 'Inconclusive'], limits.unsuccessful),
  ].map((run) => ({ kind: 'deleteAnalysisRun', name: run.name }));
}
