// The steady state: no update in progress (first deploy, or the template is the stable one).
import type { SubStepTable } from '../pass/sub-step.ts';
import { reportSteadyState } from './report-steady-state.ts';
import { scaleStable } from './scale-stable.ts';
import { settleOnStable } from './settle-on-stable.ts';

/** Shared by every strategy: the current revision is (or becomes at once, on a first deploy) the stable. */
export const STEADY_STATE_SUB_STEPS: SubStepTable = [
  { name: 'settle-on-stable', run: settleOnStable },
  { name: 'scale-stable', run: scaleStable },
  { name: 'report-steady-state', run: reportSteadyState },
];
