// The blue-green strategy: its sub-steps, in the order one pass runs them (shared ones from sub-steps/).
import { announceRevision } from '../canary/announce-revision.ts';
import type { SubStepTable } from '../pass/sub-step.ts';
import { recordAbort } from '../sub-steps/record-abort.ts';
import { retryAborted } from '../sub-steps/retry-aborted.ts';
import { autoPromotionPause } from './auto-promotion-pause.ts';
import { checkBlueGreenDeadline } from './blue-green-deadline.ts';
import { carryOutBlueGreenAbort } from './carry-out-blue-green-abort.ts';
import { completeBlueGreen } from './complete-blue-green.ts';
import { fastRollback } from './fast-rollback.ts';
import { holdWhilePaused } from './hold-while-paused.ts';
import { judgePromotionAnalysis } from './judge-promotion-analysis.ts';
import { keepGateRun } from './keep-gate-run.ts';
import { postPromotionAnalysis } from './post-promotion-analysis.ts';
import { prePromotionAnalysis } from './pre-promotion-analysis.ts';
import { recordPromotion } from './record-promotion.ts';
import { scaleDownOld } from './scale-down-old.ts';
import { scaleUpPreview } from './scale-up-preview.ts';
import { scaleUpPromoted } from './scale-up-promoted.ts';
import { switchActiveService } from './switch-active-service.ts';
import { switchPreviewService } from './switch-preview-service.ts';
import { waitForPreview } from './wait-for-preview.ts';

/**
 * A blue-green update in progress (a stable exists and the template differs from it). As in the canary,
 * analysis and the deadline name an abort cause first, the abort is recorded in a pass of its own before
 * any Service or pod is touched, and only a pass that does not abort moves ReplicaSets and selectors.
 * Then one safe move per pass, the next pass observing the result: both revisions up and the preview
 * Service on the new one; once its pods are available the gates (pre-promotion analysis, then the pause),
 * passed once (status.blueGreen.scaleUpPreviewCheckPoint); the full scale; the active Service switch; after
 * it the post-promotion analysis, then completion.
 */
export const BLUE_GREEN_SUB_STEPS: SubStepTable = [
  { name: 'announce-revision', run: announceRevision },
  { name: 'retry-aborted', run: retryAborted },
  { name: 'judge-promotion-analysis', run: judgePromotionAnalysis },
  { name: 'check-progress-deadline', run: checkBlueGreenDeadline },
  { name: 'record-abort', run: recordAbort },
  { name: 'carry-out-abort', run: carryOutBlueGreenAbort },
  { name: 'keep-gate-run', run: keepGateRun },
  { name: 'scale-up-preview', run: scaleUpPreview },
  { name: 'switch-preview-service', run: switchPreviewService },
  { name: 'scale-down-old', run: scaleDownOld },
  { name: 'wait-for-preview', run: waitForPreview },
  { name: 'hold-while-paused', run: holdWhilePaused },
  { name: 'fast-rollback', run: fastRollback },
  { name: 'pre-promotion-analysis', run: prePromotionAnalysis },
  { name: 'auto-promotion-pause', run: autoPromotionPause },
  { name: 'record-promotion', run: recordPromotion },
  { name: 'scale-up-promoted', run: scaleUpPromoted },
  { name: 'switch-active-service', run: switchActiveService },
  { name: 'post-promotion-analysis', run: postPromotionAnalysis },
  { name: 'complete', run: completeBlueGreen },
];
