// Blue-green sub-step: after the switch, the post-promotion analysis judges the live revision before completion.
import type { Pass } from '../pass/pass.ts';
import { blueGreenOf, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';
import { gateRun } from './promotion-gate-run.ts';

/**
 * After the switch, with strategy.blueGreen.postPromotionAnalysis and unless `promote --full` skipped it:
 * its AnalysisRun `<rollout>-<hash>-post` is created when missing (or replaced when stopped unfinished) and
 * the pass ends Progressing "waiting for AnalysisRun …" (checkpoint recorded) until it is Successful; the
 * previous stable keeps its pods meanwhile. A failed or inconclusive run was judged earlier (an abort).
 */
export function postPromotionAnalysis(pass: Pass): Pass {
  const analysis = blueGreenOf(pass).postPromotionAnalysis;
  if (
    !switched(pass) ||
    analysis === undefined ||
    (analysis.templates ?? []).length === 0 ||
    pass.state.promoteFull
  )
    return pass;
  const gate = gateRun(pass, 'post', analysis);
  return gate.passed ? gate.pass : inProgress(gate.pass, gate.waitingFor ?? '', true);
}
