// Blue-green sub-step: the pre-promotion analysis gates the promotion until its run is Successful.
import type { Pass } from '../pass/pass.ts';
import { blueGreenOf, gatesPassed, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';
import { gateRun } from './promotion-gate-run.ts';

/**
 * Before the switch and until the gates are passed, with strategy.blueGreen.prePromotionAnalysis: its
 * AnalysisRun `<rollout>-<hash>-pre` is created when missing (or replaced when stopped unfinished) and the
 * pass ends Progressing "waiting for AnalysisRun …" until it is Successful (or promoted while
 * inconclusive); then the pass goes on. A failed or inconclusive run was judged earlier
 * (judge-promotion-analysis).
 */
export function prePromotionAnalysis(pass: Pass): Pass {
  const analysis = blueGreenOf(pass).prePromotionAnalysis;
  if (
    switched(pass) ||
    gatesPassed(pass) ||
    analysis === undefined ||
    (analysis.templates ?? []).length === 0
  )
    return pass;
  const gate = gateRun(pass, 'pre', analysis);
  return gate.passed ? gate.pass : inProgress(gate.pass, gate.waitingFor ?? '', false);
}
