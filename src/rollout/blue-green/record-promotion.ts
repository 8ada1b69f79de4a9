// Blue-green sub-step: a revision that just passed its gates is promoted: its pauses are lifted.
import { amend, event, type Pass } from '../pass/pass.ts';
import { INCONCLUSIVE_ANALYSIS_RUN } from '../plan-steps.ts';
import { BLUE_GREEN_PAUSE, gatesPassed, switched } from './blue-green-view.ts';

/**
 * Runs once, in the pass where the gates before it (pre-promotion analysis, pause) let the revision
 * through: removes pause conditions BlueGreenPause and InconclusiveAnalysisRun, clears controllerPause and
 * emits RolloutPromoted. Later sub-steps of this pass record the checkpoint
 * (status.blueGreen.scaleUpPreviewCheckPoint), so the next passes skip the gates. Never ends the pass.
 */
export function recordPromotion(pass: Pass): Pass {
  if (switched(pass) || gatesPassed(pass)) return pass;
  return amend(pass, {
    state: {
      pauseConditions: pass.state.pauseConditions.filter(
        (c) => c.reason !== BLUE_GREEN_PAUSE && c.reason !== INCONCLUSIVE_ANALYSIS_RUN,
      ),
      controllerPause: false,
    },
    events: [event('Normal', 'RolloutPromoted', `Revision ${pass.revision.hash} passed its promotion gates`)],
  });
}
