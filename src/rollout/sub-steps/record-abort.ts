// Shared sub-step: an abort is recorded first, in a pass of its own (status and events only), F1.
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { amend, event, withFailures, type Pass } from '../pass/pass.ts';

const ABORTED = 'RolloutAborted';

/** The recorded abort message says the progress deadline caused it (condition reason ProgressDeadlineExceeded). */
export function abortedByDeadline(message: string | undefined): boolean {
  return (message ?? '').startsWith(`${ABORTED}: ProgressDeadlineExceeded`);
}

/**
 * Turns an abort cause found by an earlier sub-step (or a user's `abort`, status.abort) into the aborted
 * state. The first pass that sees it only records it: status.abort, abortedAt, phase Degraded with a
 * message naming the cause, a RolloutAborted event (and ProgressDeadlineExceeded when the deadline
 * caused it), and asks to plan again at once. Nothing a router or a pod does can block that write.
 * Once recorded, the pass goes on to the strategy's own way of carrying the abort out.
 */
export function recordAbort(pass: Pass): Pass {
  const { context, revision, findings } = pass;
  const abort = pass.state.abort || findings.abortCause !== undefined;
  if (!abort) return pass;
  const live = context.status;
  const recorded =
    pass.state.abortedAt !== undefined &&
    live.phase === 'Degraded' &&
    (live.message ?? '').startsWith(ABORTED);
  const cleared = amend(pass, {
    state: {
      abort: true,
      pauseConditions: [],
      controllerPause: false,
      progress: undefined,
      promoteFull: false,
    },
  });
  if (recorded) return cleared;
  const cause =
    findings.abortCause ??
    withFailures(
      `Rollout aborted update to revision ${revision.number}`,
      describePodFailures(findPodFailures(context.observed.pods, revision.hash)),
    );
  const message = `${ABORTED}: ${cause}`;
  const byDeadline = findings.abortReason === 'ProgressDeadlineExceeded';
  return amend(cleared, {
    state: { abortedAt: context.now.toISOString() },
    clearWrites: true,
    events: [
      ...(byDeadline && live.phase !== 'Degraded'
        ? [event('Warning', 'ProgressDeadlineExceeded', cause)]
        : []),
      event('Warning', ABORTED, message),
    ],
    verdict: {
      phase: 'Degraded',
      message,
      aborted: true,
      deadlineExceeded: byDeadline,
      paused: false,
      completed: false,
      stableHash: revision.stableHash ?? revision.hash,
      // With a router, what it holds is known again only from a pass after this one (a write of status
      // refused after the router took a weight leaves status behind): the abort's weights are sent then.
      weights: context.router !== undefined ? 'forget' : 'keep',
      immediate: true,
    },
  });
}
