// Steady-state sub-step: the progress deadline of the stable revision, and the phase it reports.
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { amend, event, withFailures, type Pass } from '../pass/pass.ts';
import { countOf } from '../replica-sets.ts';
import { blueGreenStatus } from '../blue-green/blue-green-view.ts';
import { deadlineMessage, trackProgress } from '../sub-steps/track-progress.ts';
import { stableTraffic } from './scale-stable.ts';

/**
 * The deadline runs while the revision has fewer available pods than spec.replicas (nothing to abort to:
 * it only reports Degraded). Phase: Paused (spec.paused), Degraded past the deadline, Healthy once every
 * pod is available (RolloutCompleted the first time), else Progressing.
 */
export function reportSteadyState(pass: Pass): Pass {
  const { context, revision } = pass;
  const { replicas } = context;
  const hash = revision.hash;
  const rs = revision.current;
  const available = countOf(rs).available;
  const tracked = trackProgress(pass, {
    target: replicas,
    available,
    paused: context.spec.paused,
    mayAbort: false,
  });
  const complete = rs !== undefined && rs.replicas === replicas && available >= replicas;
  const exceeded = tracked.findings.deadlineExceeded;
  const live = context.status;
  const failures = describePodFailures(findPodFailures(context.observed.pods, hash));
  let phase: 'Paused' | 'Degraded' | 'Healthy' | 'Progressing';
  let message: string;
  if (context.spec.paused) {
    phase = 'Paused';
    message = 'manually paused';
  } else if (exceeded) {
    phase = 'Degraded';
    message = deadlineMessage(pass);
  } else if (complete) {
    phase = 'Healthy';
    message = '';
  } else {
    phase = 'Progressing';
    message = withFailures(
      rs === undefined || rs.replicas < replicas
        ? 'more replicas need to be updated'
        : 'updated replicas are still becoming available',
      failures,
    );
  }
  const events = [];
  if (phase === 'Healthy' && live.phase !== 'Healthy')
    events.push(
      event(
        'Normal',
        'RolloutCompleted',
        revision.stableHash === undefined
          ? `Rollout created revision ${hash}`
          : `Rollout is healthy at revision ${hash}`,
      ),
    );
  if (exceeded && live.phase !== 'Degraded')
    events.push(event('Warning', 'ProgressDeadlineExceeded', message));
  return amend(tracked, {
    // Once the revision is complete nothing is expected to progress: the window goes.
    state: complete ? { progress: undefined } : {},
    events,
    verdict: {
      phase,
      message,
      aborted: false,
      deadlineExceeded: exceeded,
      paused: context.spec.paused,
      completed: complete,
      stableHash: hash,
      weights: pass.findings.trafficSent === false ? 'keep' : stableTraffic(pass),
      // Blue-green at rest: the selectors as they stand (activeSelector is what Argo CD's health check and
      // Argo's plugin compare with currentPodHash), as Argo records them from the first revision on.
      ...(context.spec.strategy.blueGreen !== undefined
        ? { blueGreen: blueGreenStatus(tracked, false) }
        : {}),
    },
  });
}
