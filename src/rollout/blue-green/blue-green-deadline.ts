// Blue-green sub-step: the progress deadline against the pods the new ReplicaSet should have available now.
import type { Pass } from '../pass/pass.ts';
import { pausedOnInconclusiveRun } from '../sub-steps/judge-analysis-run.ts';
import { trackProgress } from '../sub-steps/track-progress.ts';
import { BLUE_GREEN_PAUSE, honestAvailable, wantedReplicas } from './blue-green-view.ts';

/**
 * The clock runs while the new revision has fewer available pods than it needs now (the preview count,
 * then spec.replicas once promoted); a pause (spec.paused, BlueGreenPause, an inconclusive run) stops it.
 * An exceeded deadline aborts when spec.progressDeadlineAbort says so.
 */
export function checkBlueGreenDeadline(pass: Pass): Pass {
  if (pass.state.abort) return pass;
  const target = wantedReplicas(pass);
  return trackProgress(pass, {
    target: pass.revision.current === undefined ? Math.max(1, target) : target,
    available: honestAvailable(pass),
    paused:
      pass.context.spec.paused ||
      pausedOnInconclusiveRun(pass) ||
      pass.state.pauseConditions.some((c) => c.reason === BLUE_GREEN_PAUSE),
    mayAbort: true,
  });
}
