// Blue-green: how a pass that has not completed the update ends (Progressing, Paused or Degraded).
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { amend, event, withFailures, type Pass } from '../pass/pass.ts';
import type { EmitEventAction } from '../rollout-action.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';
import { deadlineMessage } from '../sub-steps/track-progress.ts';
import { BLUE_GREEN_PAUSE, blueGreenStatus, stableHashOf } from './blue-green-view.ts';

type Phase = 'Progressing' | 'Paused' | 'Degraded';

/**
 * Ends the pass with the update still in progress. Phase Paused (`paused`, or spec.paused) with the pause's
 * reason as message, else Progressing with `detail` and the new revision's failing pods; Degraded past the
 * progress deadline (ProgressDeadlineExceeded emitted on entering it). Every unfinished AnalysisRun but
 * findings.wantedRuns stops. Records status.blueGreen with the selectors as this pass's writes leave them
 * and `checkpoint` as scaleUpPreviewCheckPoint.
 */
export function inProgress(pass: Pass, detail: string, checkpoint: boolean, paused = false): Pass {
  const { context, revision, findings } = pass;
  const failures = describePodFailures(findPodFailures(context.observed.pods, revision.hash));
  const events: EmitEventAction[] = [];
  let phase: Phase = paused || context.spec.paused ? 'Paused' : 'Progressing';
  let message =
    phase === 'Paused'
      ? context.spec.paused
        ? 'manually paused'
        : // Argo's message for a pause is its first pause condition's reason, nothing more.
          (pass.state.pauseConditions[0]?.reason ?? BLUE_GREEN_PAUSE)
      : withFailures(detail, failures);
  if (findings.deadlineExceeded) {
    phase = 'Degraded';
    message = deadlineMessage(pass);
    if (context.status.phase !== 'Degraded')
      events.push(event('Warning', 'ProgressDeadlineExceeded', message));
  }
  const next = stopUnwantedRuns(amend(pass, { events }));
  return amend(next, {
    verdict: {
      phase,
      message,
      aborted: false,
      deadlineExceeded: findings.deadlineExceeded,
      paused: phase === 'Paused',
      completed: false,
      stableHash: stableHashOf(pass),
      weights: 'keep',
      blueGreen: blueGreenStatus(next, checkpoint),
    },
  });
}
