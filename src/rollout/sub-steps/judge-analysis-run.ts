// Shared: what an AnalysisRun's result does to the rollout (abort, pause until a human acts, go on).
import type { ObservedAnalysisRun } from '../observed-state.ts';
import { isStoppable } from '../plan-analysis.ts';
import { INCONCLUSIVE_ANALYSIS_RUN } from '../plan-steps.ts';
import { amend, event, type Pass } from '../pass/pass.ts';

/** An inconclusive result is paused on (as Argo) until a human promotes or aborts (F4). */
export function pauseForInconclusiveRun(pass: Pass, runName: string): Pass {
  return amend(pass, {
    state: {
      pauseConditions: [
        ...pass.state.pauseConditions,
        { reason: INCONCLUSIVE_ANALYSIS_RUN, startTime: pass.context.now.toISOString() },
      ],
      controllerPause: true,
    },
    events: [
      event('Warning', 'AnalysisRunInconclusive', `AnalysisRun ${runName} is inconclusive: rollout paused`),
    ],
  });
}

/** The pause an inconclusive run put the rollout in is still there. */
export function pausedOnInconclusiveRun(pass: Pass): boolean {
  return pass.state.pauseConditions.some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN);
}

/**
 * A promote cleared the inconclusive pause: Argo's promote removes the pause conditions and leaves
 * controllerPause set, which is how a later pass tells "promoted" from "never paused".
 */
export function promotedWhilePaused(pass: Pass): boolean {
  return pass.state.controllerPause && pass.state.pauseConditions.length === 0;
}

/** The abort cause a failed run gives, naming the run, its phase and its message. */
export function failedRunCause(runName: string, run: ObservedAnalysisRun | undefined): string {
  return `AnalysisRun ${runName} ${run?.phase ?? 'Failed'}${run?.message ? `: ${run.message}` : ''}`;
}

/**
 * Shared sub-step: stops every unfinished AnalysisRun the pass does not want (findings.wantedRuns): runs
 * of an older revision or step, or a background run past completion.
 */
export function stopUnwantedRuns(pass: Pass): Pass {
  const wanted = new Set(pass.findings.wantedRuns);
  const stops = pass.context.observed.analysisRuns
    .filter((run) => !wanted.has(run.name) && isStoppable(run))
    .filter((run) => !pass.housekeeping.some((a) => a.kind === 'terminateAnalysisRun' && a.name === run.name))
    .map((run) => ({ kind: 'terminateAnalysisRun' as const, name: run.name }));
  return stops.length === 0 ? pass : amend(pass, { housekeeping: stops });
}
