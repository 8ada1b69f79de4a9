// Shared sub-step: `retry` cleared status.abort after an abort was recorded; start over from step 0.
import { POD_TEMPLATE_HASH_LABEL } from '../rollout-action.ts';
import { amend, event, type Pass } from '../pass/pass.ts';
import { stopUnwantedRuns } from './judge-analysis-run.ts';

/**
 * A retry: the abort flag is gone but abortedAt is still recorded. Every run of the revision is
 * stopped and deleted (fresh runs are created as the steps come round again), the steps, pauses and
 * progress window start over, and the pass ends after recording that, planning again at once.
 */
export function retryAborted(pass: Pass): Pass {
  const { context, revision, state } = pass;
  if (state.abort || state.abortedAt === undefined) return pass;
  const name = context.name;
  const deletes = context.observed.analysisRuns
    .filter(
      (run) =>
        run.labels[POD_TEMPLATE_HASH_LABEL] === revision.hash ||
        run.name.startsWith(`${name}-${revision.hash}-`),
    )
    .map((run) => ({ kind: 'deleteAnalysisRun' as const, name: run.name }));
  return amend(stopUnwantedRuns(amend(pass, { findings: { wantedRuns: [] } })), {
    actions: deletes,
    state: {
      stepIndex: 0,
      pauseConditions: [],
      controllerPause: false,
      abortedAt: undefined,
      progress: undefined,
      promoteFull: false,
    },
    events: [
      event(
        'Normal',
        'RolloutRetried',
        `Retrying update to revision ${revision.number} (${revision.hash}) from step 0`,
      ),
    ],
    verdict: {
      phase: 'Progressing',
      message: 'retrying',
      aborted: false,
      deadlineExceeded: false,
      paused: false,
      completed: false,
      stableHash: revision.stableHash ?? revision.hash,
      weights: 'keep',
      immediate: true,
    },
  });
}
