// Blue-green sub-step: which promotion run this pass keeps; every other unfinished run is stopped when the pass ends.
import { amend, type Pass } from '../pass/pass.ts';
import { blueGreenOf, gatesPassed, promotionRunName, switched } from './blue-green-view.ts';

/**
 * Sets findings.wantedRuns to the gate run still to pass, kept running while pods come and go: before the
 * switch the pre-promotion run until the gates are passed (status.blueGreen.scaleUpPreviewCheckPoint),
 * after it the post-promotion run unless `promote --full` skipped it. No state, no writes, never ends the
 * pass.
 */
export function keepGateRun(pass: Pass): Pass {
  const { prePromotionAnalysis, postPromotionAnalysis } = blueGreenOf(pass);
  const wanted = switched(pass)
    ? postPromotionAnalysis !== undefined && !pass.state.promoteFull
      ? [promotionRunName(pass, 'post')]
      : []
    : prePromotionAnalysis !== undefined && !gatesPassed(pass)
      ? [promotionRunName(pass, 'pre')]
      : [];
  return amend(pass, { findings: { wantedRuns: wanted } });
}
