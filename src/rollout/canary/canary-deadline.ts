// Canary sub-step: the progress deadline against the canary's target at the current step (F1, F5).
import type { Pass } from '../pass/pass.ts';
import { pausedOnInconclusiveRun } from '../sub-steps/judge-analysis-run.ts';
import { replicaProgressTarget } from '../replica-progress-threshold.ts';
import { trackProgress } from '../sub-steps/track-progress.ts';
import { countsAt, honestAvailable, targetIndex } from './canary-view.ts';

/**
 * The deadline measure for step `index`: the canary's available pods against that step's target (the pods
 * canary.replicaProgressThreshold counts as enough, when set: the step goes on without the others).
 */
export function canaryProgressAt(pass: Pass, index: number, mayAbort: boolean): Pass {
  const target = replicaProgressTarget(
    pass.context.canary.replicaProgressThreshold,
    countsAt(pass, index).target.canary,
  );
  return trackProgress(pass, {
    // Before its ReplicaSet exists the canary is waiting for at least one pod.
    target: pass.revision.current === undefined ? Math.max(1, target) : target,
    available: honestAvailable(pass),
    // A pause step waits on time or a human, not on pods: spec.paused and an inconclusive analysis stop it.
    paused: pass.context.spec.paused || pausedOnInconclusiveRun(pass),
    mayAbort,
  });
}

/** Checked on every pass, before and independent of traffic; an exceeded deadline may abort. */
export function checkCanaryDeadline(pass: Pass): Pass {
  if (pass.state.abort) return pass;
  return canaryProgressAt(pass, targetIndex(pass), true);
}
