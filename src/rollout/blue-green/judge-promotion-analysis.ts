// Blue-green sub-step: the promotion analyses' results: a failure aborts, an inconclusive one pauses or aborts.
import { analysisVerdict } from '../plan-analysis.ts';
import { amend, type Pass } from '../pass/pass.ts';
import {
  failedRunCause,
  pauseForInconclusiveRun,
  pausedOnInconclusiveRun,
  promotedWhilePaused,
} from '../sub-steps/judge-analysis-run.ts';
import { gatesPassed, promotionRunName, switched } from './blue-green-view.ts';

/**
 * Before the switch, the pre-promotion run gates it: Failed or Error is the abort cause; Inconclusive
 * pauses (InconclusiveAnalysisRun, as Argo) until a human promotes (the gate counts as passed) or aborts.
 * After the switch, the post-promotion run judges the revision taking live traffic: Failed, Error or
 * Inconclusive is the abort cause, so the active Service goes back to the previous ReplicaSet at once.
 * A new revision's runs left from an earlier attempt at the same template are deleted, not judged.
 */
export function judgePromotionAnalysis(pass: Pass): Pass {
  if (pass.state.abort) return pass;
  const { context } = pass;
  if (pass.revision.newRevision) {
    // A template that comes back (after a supersede) is a new attempt: its runs from before start afresh.
    const stale = context.observed.analysisRuns
      .filter(
        (run) => run.name === promotionRunName(pass, 'pre') || run.name === promotionRunName(pass, 'post'),
      )
      .map((run) => ({ kind: 'deleteAnalysisRun' as const, name: run.name }));
    return stale.length === 0 ? pass : amend(pass, { housekeeping: stale });
  }
  const gate = switched(pass)
    ? pass.state.promoteFull
      ? undefined
      : 'post'
    : gatesPassed(pass)
      ? undefined
      : 'pre';
  if (gate === undefined) return pass;
  const name = promotionRunName(pass, gate);
  const run = context.observed.analysisRuns.find((candidate) => candidate.name === name);
  const verdict = analysisVerdict(run);
  if (verdict === 'failed' || (verdict === 'inconclusive' && gate === 'post'))
    return amend(pass, {
      findings: { abortCause: failedRunCause(name, run), abortReason: 'AnalysisRunFailed' },
    });
  if (verdict !== 'inconclusive' || pausedOnInconclusiveRun(pass) || promotedWhilePaused(pass)) return pass;
  return pauseForInconclusiveRun(pass, name);
}
