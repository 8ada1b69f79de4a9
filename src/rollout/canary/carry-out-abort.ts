// Canary sub-step: an abort already recorded is carried out: traffic back to stable first, then the pods (F1).
import { oldReplicaSetWrites } from '../plan-scale-down.ts';
import type { DesiredTraffic } from '../plan-traffic.ts';
import { amend, scale, type Pass } from '../pass/pass.ts';
import { routerErrorOf } from '../pass/finish-pass.ts';
import type { RolloutAction } from '../rollout-action.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';
import { abortedByDeadline } from '../sub-steps/record-abort.ts';
import { managedRouteRemovals } from '../sub-steps/remove-managed-routes.ts';
import { countsAt, stableHashOf, stableOf, trafficWrites } from './canary-view.ts';

/**
 * Every run is stopped; the router is sent back to 100 % stable before any pod is touched; then the stable
 * is scaled back up and the canary down. The canary keeps its pods for abortScaleDownDelaySeconds (with
 * a router, where 0 means "keep them"; a replica-ratio canary scales down at once unless a delay is set;
 * with dynamicStableScale and no delay written, at once, as Argo).
 * A failing router never blocks the scale: it is retried after it. The message recorded with the abort
 * stays, whatever the router does since.
 */
export function carryOutAbort(pass: Pass): Pass {
  if (!pass.state.abort) return pass;
  const { context, revision } = pass;
  const { now } = context;
  const rs = revision.current;
  const stable = stableOf(pass);
  const stopped = stopUnwantedRuns(amend(pass, { findings: { wantedRuns: [] } }));
  const desired: DesiredTraffic = { canaryWeight: 0, stableHash: stableHashOf(pass) };
  // With a router, the weights are the first write: the canary Service may still carry requests.
  const traffic = trafficWrites(pass, desired, { weightsFirst: context.router !== undefined });
  // Argo: with dynamicStableScale and no abortScaleDownDelaySeconds written, the canary is not kept.
  const noDelay =
    context.router !== undefined &&
    context.canary.dynamicStableScale &&
    context.rollout.spec.strategy.canary?.abortScaleDownDelaySeconds === undefined;
  const delayMs = noDelay ? 0 : context.canary.abortScaleDownDelaySeconds * 1000;
  const abortedAtMs = Date.parse(pass.state.abortedAt ?? '');
  const scaleDownAt = (Number.isNaN(abortedAtMs) ? now.getTime() : abortedAtMs) + delayMs;
  const hold = !noDelay && ((context.trafficRouted && delayMs === 0) || now.getTime() < scaleDownAt);

  const actions: RolloutAction[] = [];
  let events = stopped.events;
  let trafficEmitted = false;
  if (traffic.length > 0 && routerErrorOf(context) === undefined) {
    actions.push(...traffic);
    trafficEmitted = true;
    // A stable shrunk by dynamicStableScale grows back in the same pass: it is about to take everything.
    const back = countsAt(pass, 0, { hold: true, weight: 0 }).next.stable;
    if (context.router !== undefined && back > stable.replicas) actions.push(scale(stable, back));
  } else {
    const counts = countsAt(pass, 0, { hold, weight: 0 });
    if (rs !== undefined && counts.next.canary !== rs.replicas) actions.push(scale(rs, counts.next.canary));
    if (counts.next.stable !== stable.replicas) actions.push(scale(stable, counts.next.stable));
    const writes = oldReplicaSetWrites(pass.old, counts.next.others, now);
    actions.push(...writes.actions);
    events = [...events, ...writes.events];
    if (traffic.length > 0) {
      actions.push(...traffic);
      trafficEmitted = true;
    }
  }
  // Header and mirror routes go with the weights (after them): they send requests to the canary too.
  const routes = managedRouteRemovals(pass);
  actions.push(...routes.actions);
  const live = context.status;
  return amend(
    { ...stopped, events },
    {
      actions,
      state: routes.state,
      wakeAtMs: [delayMs > 0 && now.getTime() < scaleDownAt ? scaleDownAt : undefined],
      verdict: {
        phase: 'Degraded',
        message: live.message ?? `RolloutAborted: Rollout aborted update to revision ${revision.number}`,
        aborted: true,
        deadlineExceeded: abortedByDeadline(live.message),
        paused: false,
        completed: false,
        stableHash: stableHashOf(pass),
        weights: trafficEmitted ? desired : 'keep',
      },
    },
  );
}
