// The blue-green strategy: its sub-steps, in the order one pass runs them (shared ones from sub-steps/).
import { announceRevision } from '../canary/announce-revision.ts';
import type { SubStepTable } from '../pass/sub-step.ts';
import { recordAbort } from '../sub-steps/record-abort.ts';
import { retryAborted } from '../sub-steps/retry-aborted.ts';
import { checkBlueGreenDeadline } from './blue-green-deadline.ts';
import { carryOutBlueGreenAbort } from './carry-out-blue-green-abort.ts';
import { judgePromotionAnalysis } from './judge-promotion-analysis.ts';
import { promoteBlueGreen } from './promote-blue-green.ts';

/**
 * A blue-green update in progress (a stable exists and the template differs from it). As in the canary,
 * analysis and the deadline name an abort cause first, the abort is recorded in a pass of its own before
 * any Service or pod is touched, and only a pass that does not abort moves ReplicaSets and selectors.
 */
export const BLUE_GREEN_SUB_STEPS: SubStepTable = [
  { name: 'announce-revision', run: announceRevision },
  { name: 'retry-aborted', run: retryAborted },
  { name: 'judge-promotion-analysis', run: judgePromotionAnalysis },
  { name: 'check-progress-deadline', run: checkBlueGreenDeadline },
  { name: 'record-abort', run: recordAbort },
  { name: 'carry-out-abort', run: carryOutBlueGreenAbort },
  { name: 'promote', run: promoteBlueGreen },
];
