// Canary sub-step: one safe move of the ReplicaSets toward the step's counts, traffic between, then the status.
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { replicaSetName } from '../plan-revision.ts';
import { oldReplicaSetWrites, planRevisionHistory } from '../plan-scale-down.ts';
import { amend, event, scale, withFailures, type Pass } from '../pass/pass.ts';
import { routerErrorOf } from '../pass/finish-pass.ts';
import { createReplicaSet } from '../replica-sets.ts';
import type { EmitEventAction, RolloutAction } from '../rollout-action.ts';
import { fullWeightOf } from '../rollout-context.ts';
import { managedRouteRemovals, managedRouteRetries } from '../sub-steps/remove-managed-routes.ts';
import { deadlineMessage } from '../sub-steps/track-progress.ts';
import {
  draining,
  honestAvailable,
  passCounts,
  stableHashOf,
  stableOf,
  targetIndex,
  trafficAt,
  trafficHolds,
  trafficWrites,
} from './canary-view.ts';

/**
 * One phase per pass, because order matters and the next pass observes the result instead of assuming it:
 * 0. with a router, a superseded canary's weight goes to 0 first (before the new canary is created), and
 *    experiment templates that are no longer wanted leave the route first;
 * 1. scale up (within the surge ceiling), creating the canary ReplicaSet when missing;
 * 2. traffic, once the scale-up is observed (a failing router is retried here and reported); with a
 *    router, only while the stable has the available pods for the weight it keeps;
 * 3. scale down (within the availability floor): old ReplicaSets first, then canary and stable; with
 *    nothing else to do, ReplicaSets beyond revisionHistoryLimit are deleted.
 * Then the phase: Degraded past the progress deadline, Paused, or Progressing with what it waits for.
 */
export function scaleAndRoute(pass: Pass): Pass {
  const { context, revision, state, findings } = pass;
  const { now, name } = context;
  const rs = revision.current;
  const stable = stableOf(pass);
  const index = targetIndex(pass);
  const counts = passCounts(pass);
  const desired = draining(pass) ? { ...trafficAt(pass, index), canaryWeight: 0 } : trafficAt(pass, index);
  // With a router the stable must have the available pods for the weight it keeps (Argo): until then the
  // router keeps what it holds. A superseded canary's weight goes to 0 regardless.
  const stableShort =
    context.router !== undefined &&
    !draining(pass) &&
    stable.status.availableReplicas <
      Math.floor(((fullWeightOf(context) - desired.canaryWeight) * context.replicas) / fullWeightOf(context));
  // A superseded canary's weight goes before its Service points at the new (still empty) canary.
  const traffic = trafficWrites(pass, desired, {
    weightsFirst: context.router !== undefined && draining(pass),
  }).filter((write) => !(stableShort && write.kind === 'setTrafficWeights'));
  const rsName = replicaSetName(name, revision.hash);
  const actions: RolloutAction[] = [];
  const events: EmitEventAction[] = [];
  let trafficEmitted = false;
  // With a router, a superseded canary loses its traffic before anything else is created or scaled; so do
  // experiment templates no longer wanted (the step passed, a promotion): their pods go after the
  // Experiment's own scale-down delay, whatever this canary's scale-up still needs.
  const leaving =
    (context.status.canary?.weights?.additional ?? []).length > 0 && (desired.additional ?? []).length === 0;
  const trafficFirst =
    context.router !== undefined &&
    (draining(pass) || leaving) &&
    routerErrorOf(context) === undefined &&
    traffic.some((write) => write.kind === 'setTrafficWeights');
  if (trafficFirst) {
    actions.push(...traffic);
    trafficEmitted = true;
  } else if (rs === undefined) {
    actions.push(createReplicaSet(context, revision, counts.next.canary));
    events.push(event('Normal', 'ReplicaSetCreated', `Created canary ReplicaSet ${rsName}`));
  } else if (counts.next.canary > rs.replicas || counts.next.stable > stable.replicas) {
    if (counts.next.canary > rs.replicas) actions.push(scale(rs, counts.next.canary));
    if (counts.next.stable > stable.replicas) actions.push(scale(stable, counts.next.stable));
  } else if (traffic.length > 0) {
    actions.push(...traffic);
    trafficEmitted = true;
  } else if (trafficHolds(pass, desired) || (routerErrorOf(context) === undefined && !stableShort)) {
    // Scale down only once the router holds the weights: a failing router waiting for its retry holds it.
    const writes = oldReplicaSetWrites(pass.old, counts.next.others, now);
    actions.push(...writes.actions);
    events.push(...writes.events);
    if (counts.next.canary < rs.replicas) actions.push(scale(rs, counts.next.canary));
    if (counts.next.stable < stable.replicas) actions.push(scale(stable, counts.next.stable));
    if (actions.length === 0 && pass.actions.length === 0)
      actions.push(...planRevisionHistory(revision.others, context.spec.revisionHistoryLimit));
  }

  // A superseded canary's routes go after its weight (Argo: no route to a canary without available pods);
  // otherwise the routes in force are sent again while the router fails.
  const routes = draining(pass) ? managedRouteRemovals(pass) : undefined;
  if (routes !== undefined) actions.push(...routes.actions);
  else actions.push(...managedRouteRetries(pass, pass.state.stepIndex));
  const live = context.status;
  const routerError = routerErrorOf(context);
  const failures = describePodFailures(findPodFailures(context.observed.pods, revision.hash));
  const paused = context.spec.paused || state.pauseConditions.length > 0;
  let phase: 'Degraded' | 'Paused' | 'Progressing';
  let message: string;
  if (findings.deadlineExceeded) {
    phase = 'Degraded';
    message = deadlineMessage(pass);
    if (live.phase !== 'Degraded') events.push(event('Warning', 'ProgressDeadlineExceeded', message));
  } else if (paused) {
    phase = 'Paused';
    message = context.spec.paused
      ? 'manually paused'
      : // Argo's message for a pause is its first pause condition's reason, nothing more.
        (state.pauseConditions[0]?.reason ?? '');
  } else {
    phase = 'Progressing';
    const available = honestAvailable(pass);
    // Argo's phase message (what Argo CD shows): fewer current-revision pods than spec.replicas is "more
    // replicas need to be updated" whatever the step's weight, so a canary short of 100% always says so.
    // Before it, what Argo has no message for: a failing router, a step waiting on something named.
    const detail =
      routerError !== undefined
        ? `TrafficRoutingError: ${routerError.message}`
        : findings.waitingFor !== ''
          ? findings.waitingFor
          : rs === undefined || rs.replicas < Math.max(counts.target.canary, context.replicas)
            ? 'more replicas need to be updated'
            : available < counts.target.canary
              ? 'updated replicas are still becoming available'
              : stableShort && !trafficHolds(pass, desired)
                ? 'stable replicas are still becoming available'
                : stable.replicas > counts.target.stable || pass.old.some((entry) => entry.rs.replicas > 0)
                  ? 'old replicas are pending termination'
                  : 'waiting for all steps to complete';
    message = withFailures(detail, failures);
  }
  return amend(pass, {
    actions,
    events,
    ...(routes !== undefined ? { state: routes.state } : {}),
    verdict: {
      phase,
      message,
      aborted: false,
      deadlineExceeded: findings.deadlineExceeded,
      paused,
      completed: false,
      stableHash: stableHashOf(pass),
      weights: trafficEmitted && !stableShort ? desired : 'keep',
    },
  });
}
