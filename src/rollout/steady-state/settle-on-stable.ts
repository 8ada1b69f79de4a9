// Steady-state sub-step: the template is the stable one (first deploy, or back to stable): nothing to walk.
import { amend, event, type Pass } from '../pass/pass.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';

/**
 * No update is in progress: every run stops, the steps are all done, and pauses, abort and promote are
 * cleared. A template that went back to the stable one mid-canary supersedes that canary.
 */
export function settleOnStable(pass: Pass): Pass {
  const { context, revision } = pass;
  const firstDeploy = revision.stableHash === undefined;
  const back = revision.newRevision && revision.supersededHash !== undefined && !firstDeploy;
  return amend(stopUnwantedRuns(amend(pass, { findings: { wantedRuns: [] } })), {
    state: {
      stepIndex: context.steps.length,
      pauseConditions: [],
      controllerPause: false,
      abort: false,
      abortedAt: undefined,
      promoteFull: false,
    },
    events: back
      ? [
          event(
            'Normal',
            'RolloutSuperseded',
            `Revision ${revision.supersededHash} superseded by the stable revision ${revision.hash}; scaling it down`,
          ),
        ]
      : [],
  });
}
