// The canary strategy: its sub-steps, in the order one pass runs them.
import type { SubStepTable } from '../pass/sub-step.ts';
import { recordAbort } from '../sub-steps/record-abort.ts';
import { retryAborted } from '../sub-steps/retry-aborted.ts';
import { advanceSteps } from './advance-steps.ts';
import { announceRevision } from './announce-revision.ts';
import { checkCanaryDeadline } from './canary-deadline.ts';
import { carryOutAbort } from './carry-out-abort.ts';
import { completeCanary } from './complete-canary.ts';
import { judgeBackgroundAnalysis } from './judge-background-analysis.ts';
import { scaleAndRoute } from './scale-and-route.ts';
import { startAnalysisRuns } from './start-analysis-runs.ts';
import { stopExperiments } from './stop-experiments.ts';

/**
 * A canary in progress (a stable exists and the template differs from it). Findings flow down the table:
 * analysis and the deadline can name an abort cause before the steps would advance, the abort is
 * recorded before any traffic or pod is touched, and only a pass that neither aborts nor completes
 * moves ReplicaSets and traffic.
 */
export const CANARY_SUB_STEPS: SubStepTable = [
  { name: 'announce-revision', run: announceRevision },
  { name: 'retry-aborted', run: retryAborted },
  { name: 'judge-background-analysis', run: judgeBackgroundAnalysis },
  { name: 'check-progress-deadline', run: checkCanaryDeadline },
  { name: 'advance-steps', run: advanceSteps },
  { name: 'record-abort', run: recordAbort },
  { name: 'stop-experiments', run: stopExperiments },
  { name: 'carry-out-abort', run: carryOutAbort },
  { name: 'start-analysis-runs', run: startAnalysisRuns },
  { name: 'complete', run: completeCanary },
  { name: 'scale-and-route', run: scaleAndRoute },
];
