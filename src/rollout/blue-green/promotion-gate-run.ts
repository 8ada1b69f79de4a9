// Blue-green: the AnalysisRun of a promotion gate (pre or post), created, replaced or waited for.
import type { RolloutAnalysis } from '../../manifest/rollout.ts';
import { analysisVerdict, createAnalysisRunAction } from '../plan-analysis.ts';
import { amend, type Pass } from '../pass/pass.ts';
import { ANALYSIS_TYPE_LABEL, type CreateAnalysisRunAction } from '../rollout-action.ts';
import { promotedWhilePaused } from '../sub-steps/judge-analysis-run.ts';
import { promotionRunName, stableHashOf } from './blue-green-view.ts';

/** What a gate says: passed, or wait (with what it waits for, for the status message). */
export interface GateResult {
  passed: boolean;
  pass: Pass;
  waitingFor?: string;
}

function runAction(pass: Pass, analysis: RolloutAnalysis, gate: 'pre' | 'post'): CreateAnalysisRunAction {
  const base = createAnalysisRunAction(
    pass.context.name,
    analysis,
    { stable: stableHashOf(pass), latest: pass.revision.hash, revision: pass.revision.number },
    'background',
  );
  return {
    ...base,
    name: promotionRunName(pass, gate),
    labels: { ...base.labels, [ANALYSIS_TYPE_LABEL]: gate === 'pre' ? 'PrePromotion' : 'PostPromotion' },
    background: false,
  };
}

/**
 * The run of a promotion gate: created when missing (not in the pass that deletes a stale one), deleted when
 * it was stopped before it finished (a superseded attempt's, or stopped from outside), so a fresh one
 * replaces it; passed when Successful (or promoted while inconclusive). Failures are judged earlier
 * (judge-promotion-analysis).
 */
export function gateRun(pass: Pass, gate: 'pre' | 'post', analysis: RolloutAnalysis): GateResult {
  const name = promotionRunName(pass, gate);
  const run = pass.context.observed.analysisRuns.find((candidate) => candidate.name === name);
  const verdict = analysisVerdict(run);
  if (verdict === 'successful' || (verdict === 'inconclusive' && promotedWhilePaused(pass)))
    return { passed: true, pass };
  const waitingFor = `waiting for AnalysisRun ${name}`;
  const deleting = pass.housekeeping.some((a) => a.kind === 'deleteAnalysisRun' && a.name === name);
  if (verdict === 'missing' && !deleting)
    return { passed: false, pass: amend(pass, { actions: [runAction(pass, analysis, gate)] }), waitingFor };
  if (verdict === 'running' && run?.terminated === true && !deleting)
    return {
      passed: false,
      pass: amend(pass, { housekeeping: [{ kind: 'deleteAnalysisRun', name }] }),
      waitingFor,
    };
  return { passed: false, pass, waitingFor };
}
