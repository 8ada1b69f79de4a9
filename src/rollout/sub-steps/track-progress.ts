// Shared sub-step: the progress deadline, checked on every pass from the window persisted in status (F1, F5).
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { planDeadline } from '../plan-deadline.ts';
import { replicaSetName } from '../plan-revision.ts';
import { amend, withFailures, type Pass } from '../pass/pass.ts';

/** What the strategy says progress is measured against this pass. */
export interface ProgressMeasure {
  /** Available pods of the current revision the strategy waits for. */
  target: number;
  /** Available pods of the current revision that count as progress (crash-looping pods excluded). */
  available: number;
  /** A pause the rollout cannot leave by itself (spec.paused, an inconclusive analysis): the clock stops. */
  paused: boolean;
  /** When the deadline passes, record an abort if spec.progressDeadlineAbort asks for one. */
  mayAbort: boolean;
}

/** The status message of an exceeded deadline, naming the ReplicaSet and the failing pods. */
export function deadlineMessage(pass: Pass): string {
  const { context, revision } = pass;
  return withFailures(
    `ProgressDeadlineExceeded: ReplicaSet "${replicaSetName(context.name, revision.hash)}" has timed out progressing.`,
    describePodFailures(findPodFailures(context.observed.pods, revision.hash)),
  );
}

/**
 * Advances the no-progress window and reports whether the deadline passed (findings.deadlineExceeded,
 * the expiry as findings.deadlineWakeAtMs). With `mayAbort` and spec.progressDeadlineAbort, an exceeded
 * deadline becomes the pass's abort cause unless an earlier sub-step already found one. Called again
 * within a pass (a new step, a new target), the later answer replaces the earlier.
 */
export function trackProgress(pass: Pass, measure: ProgressMeasure): Pass {
  const { context, revision } = pass;
  const deadline = planDeadline({
    hash: revision.hash,
    target: measure.target,
    available: measure.available,
    paused: measure.paused,
    window: pass.state.progress,
    deadlineMs: context.spec.progressDeadlineSeconds * 1000,
    now: context.now,
  });
  const aborts =
    deadline.exceeded &&
    measure.mayAbort &&
    context.spec.progressDeadlineAbort &&
    pass.findings.abortCause === undefined;
  return amend(pass, {
    state: { progress: deadline.window },
    findings: {
      deadlineExceeded: deadline.exceeded,
      deadlineWakeAtMs: deadline.wakeAtMs,
      ...(aborts ? { abortCause: deadlineMessage(pass), abortReason: 'ProgressDeadlineExceeded' } : {}),
    },
  });
}
