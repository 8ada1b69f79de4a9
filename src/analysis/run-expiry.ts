// When a finished AnalysisRun's ttlStrategy says it goes: delete now, or look again when it is due (pure).
import type { AnalysisPhase, TtlStrategy } from '../manifest/analysis.ts';
import { isCompletedPhase } from './analysis-phase.ts';

/** The run as this decision reads it. */
export interface ExpiringRun {
  metadata: { name: string };
  spec: { ttlStrategy?: TtlStrategy | undefined };
  status?: { phase?: AnalysisPhase | undefined; completedAt?: string | undefined } | undefined;
}

/** Delete the run (the executor treats a 404 as done). */
export interface DeleteAnalysisRunAction {
  kind: 'deleteAnalysisRun';
  name: string;
}

/**
 * What to do about a run's TTL: `actions` to carry out now, and `requeueAfterMs` when it is not due yet
 * (absent when nothing is to come: no ttlStrategy, no TTL for this phase, not finished, or deleted now).
 */
export interface RunExpiryPlan {
  actions: DeleteAnalysisRunAction[];
  requeueAfterMs?: number;
}

/**
 * The seconds a run ending in `phase` is kept, as Argo picks them: secondsAfterSuccess for a Successful
 * run and secondsAfterFailure for a Failed one when set, else secondsAfterCompletion (the only one for
 * Error and Inconclusive); undefined when none applies.
 */
export function ttlSecondsOf(ttl: TtlStrategy, phase: AnalysisPhase): number | undefined {
  if (phase === 'Successful' && ttl.secondsAfterSuccess !== undefined) return ttl.secondsAfterSuccess;
  if (phase === 'Failed' && ttl.secondsAfterFailure !== undefined) return ttl.secondsAfterFailure;
  return ttl.secondsAfterCompletion;
}

/**
 * A finished run with a ttlStrategy is deleted once its TTL has passed since `status.completedAt`;
 * before that the plan asks to look again at that moment. A run without `completedAt` is kept (its end
 * is unknown, as Argo keeps it), and so is any unfinished run.
 */
export function planRunExpiry(run: ExpiringRun, now: Date): RunExpiryPlan {
  const ttl = run.spec.ttlStrategy;
  const phase = run.status?.phase;
  if (ttl === undefined || phase === undefined || !isCompletedPhase(phase)) return { actions: [] };
  const seconds = ttlSecondsOf(ttl, phase);
  const completedAt = Date.parse(run.status?.completedAt ?? '');
  if (seconds === undefined || Number.isNaN(completedAt)) return { actions: [] };
  const dueInMs = completedAt + seconds * 1000 - now.getTime();
  if (dueInMs > 0) return { actions: [], requeueAfterMs: dueInMs };
  return { actions: [{ kind: 'deleteAnalysisRun', name: run.metadata.name }] };
}
