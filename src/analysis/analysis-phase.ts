// Ordering and completion of analysis phases, shared by the planner and the measurement recorder.
import type { AnalysisPhase } from '../manifest/analysis.ts';

// Argo's order, best to worst: a run's phase is the worst of its metrics' phases.
const ORDER: readonly AnalysisPhase[] = [
  'Pending',
  'Running',
  'Successful',
  'Inconclusive',
  'Error',
  'Failed',
];

/** True for the phases that end a measurement, a metric or a run. */
export function isCompletedPhase(phase: AnalysisPhase | undefined): boolean {
  return phase === 'Successful' || phase === 'Failed' || phase === 'Error' || phase === 'Inconclusive';
}

/** True when `candidate` is worse than `current` (Failed > Error > Inconclusive > Successful > Running > Pending). */
export function isWorsePhase(current: AnalysisPhase | undefined, candidate: AnalysisPhase): boolean {
  if (current === undefined) return true;
  return ORDER.indexOf(candidate) > ORDER.indexOf(current);
}
