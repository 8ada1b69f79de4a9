// Canary sub-step: the background analysis' result: a failure aborts, an inconclusive result pauses (F4).
import { analysisRunName, analysisVerdict } from '../plan-analysis.ts';
import { amend, type Pass } from '../pass/pass.ts';
import {
  failedRunCause,
  pauseForInconclusiveRun,
  pausedOnInconclusiveRun,
  promotedWhilePaused,
} from '../sub-steps/judge-analysis-run.ts';

/** The background run's name for the pass's revision. */
export function backgroundRunName(pass: Pass): string {
  return analysisRunName(pass.context.name, pass.revision.hash, pass.revision.number, 'background');
}

/**
 * Reads the background AnalysisRun of the current revision. Failed or Error: the abort cause. Inconclusive:
 * pause with InconclusiveAnalysisRun until a human acts; after a promote the run is deleted so a fresh one
 * replaces it (created by a later pass), and the rollout goes on.
 */
export function judgeBackgroundAnalysis(pass: Pass): Pass {
  const { context } = pass;
  if (pass.state.abort || context.background === undefined) return pass;
  const name = backgroundRunName(pass);
  const run = context.observed.analysisRuns.find((candidate) => candidate.name === name);
  if (run === undefined) return pass;
  const verdict = analysisVerdict(run);
  if (verdict === 'failed')
    return amend(pass, {
      findings: { abortCause: failedRunCause(name, run), abortReason: 'AnalysisRunFailed' },
    });
  if (verdict !== 'inconclusive' || pausedOnInconclusiveRun(pass)) return pass;
  if (promotedWhilePaused(pass))
    return amend(pass, {
      housekeeping: [{ kind: 'deleteAnalysisRun', name }],
      state: { controllerPause: false },
    });
  return pauseForInconclusiveRun(pass, name);
}
