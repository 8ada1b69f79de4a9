// Steady-state sub-step: the stable ReplicaSet at spec.replicas, traffic on it, older ReplicaSets scaled down.
import { canaryReplicaCounts } from '../canary-replica-counts.ts';
import { replicaSetName } from '../plan-revision.ts';
import { oldReplicaSetWrites, planRevisionHistory } from '../plan-scale-down.ts';
import { planTraffic, type DesiredTraffic } from '../plan-traffic.ts';
import { amend, event, scale, type Pass } from '../pass/pass.ts';
import { routerErrorOf, routerRetryAtMs } from '../pass/finish-pass.ts';
import { countOf, createReplicaSet, oldCounts } from '../replica-sets.ts';
import type { RolloutAction } from '../rollout-action.ts';
import { fullWeightOf } from '../rollout-context.ts';
import { managedRouteRemovals } from '../sub-steps/remove-managed-routes.ts';

/** The traffic the stable-only rollout wants: everything to the current revision. */
export function stableTraffic(pass: Pass): DesiredTraffic {
  return { canaryWeight: 0, stableHash: pass.revision.hash };
}

/**
 * Creates the ReplicaSet (first deploy) or scales it up to spec.replicas first; then the Service selectors
 * and weights; then, once nothing is scaling up, scales down what is above spec.replicas and old
 * ReplicaSets whose deadline passed, within the availability floor; with nothing else to do, deletes
 * ReplicaSets beyond revisionHistoryLimit. A failing router is retried after the scale actions.
 */
export function scaleStable(pass: Pass): Pass {
  const { context, revision } = pass;
  const { now, replicas } = context;
  const rs = revision.current;
  const counts = canaryReplicaCounts({
    replicas,
    weight: 0,
    budget: context.budget,
    current: { canary: { replicas: 0, available: 0 }, stable: countOf(rs), others: oldCounts(pass.old) },
  });
  const actions: RolloutAction[] = [];
  const events = [];
  if (rs === undefined) {
    actions.push(createReplicaSet(context, revision, counts.next.stable));
    events.push(
      event(
        'Normal',
        'ReplicaSetCreated',
        `Created ReplicaSet ${replicaSetName(context.name, revision.hash)}`,
      ),
    );
  } else if (counts.next.stable > rs.replicas) {
    actions.push(scale(rs, counts.next.stable));
  }
  const routerError = routerErrorOf(context);
  const retryAt = routerRetryAtMs(context);
  const traffic = planTraffic({
    desired: stableTraffic(pass),
    status: context.status,
    routerError: routerError?.message,
    services: context.observed.services,
    canaryService: context.canary.canaryService,
    stableService: context.canary.stableService,
    pingPong: context.canary.pingPong,
    fullWeight: fullWeightOf(context),
  }).filter(
    (write) => write.kind !== 'setTrafficWeights' || retryAt === undefined || now.getTime() >= retryAt,
  );
  if (routerError === undefined) actions.push(...traffic);
  // With a router, old pods (a canary given up for the stable) keep serving until it holds the weights.
  const routerMoving =
    context.router !== undefined &&
    routerError === undefined &&
    traffic.some((write) => write.kind === 'setTrafficWeights');
  if (
    !routerMoving &&
    (actions.length === 0 || (rs !== undefined && actions.every((a) => a.kind !== 'scaleReplicaSet')))
  ) {
    if (rs !== undefined && counts.next.stable < rs.replicas) actions.push(scale(rs, counts.next.stable));
    const writes = oldReplicaSetWrites(pass.old, counts.next.others, now);
    actions.push(...writes.actions);
    events.push(...writes.events);
    if (actions.length === 0)
      actions.push(...planRevisionHistory(revision.others, context.spec.revisionHistoryLimit));
  }
  if (routerError !== undefined) actions.push(...traffic);
  // No canary left: header and mirror routes still set (a completion or abort whose removal failed) go.
  const routes = managedRouteRemovals(pass);
  actions.push(...routes.actions);
  return amend(pass, {
    actions,
    events,
    state: routes.state,
    findings: { trafficSent: traffic.length === 0 || routerError === undefined },
  });
}
