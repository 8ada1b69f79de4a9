// What the canary sub-steps derive from a pass: replica targets per step, honest availability, traffic.
import {
  canaryReplicaCounts,
  routedCanaryReplicaCounts,
  type CanaryReplicaCounts,
} from '../canary-replica-counts.ts';
import { countRestartedReadyPods } from '../failing-pods.ts';
import type { ObservedReplicaSet } from '../observed-state.ts';
import { routerErrorOf, routerRetryAtMs } from '../pass/finish-pass.ts';
import type { Pass } from '../pass/pass.ts';
import { canaryScaleAt, canaryWeightAt } from '../plan-steps.ts';
import { planTraffic, trafficIsSet, type DesiredTraffic } from '../plan-traffic.ts';
import { replicaProgressTarget } from '../replica-progress-threshold.ts';
import { experimentDestinationsAt } from './experiment-destinations.ts';
import { countOf, oldCounts } from '../replica-sets.ts';
import type { RolloutAction } from '../rollout-action.ts';
import { fullWeightOf, type RolloutContext } from '../rollout-context.ts';

/** The stable ReplicaSet of a canary pass (a canary pass exists only when there is one). */
export function stableOf(pass: Pass): ObservedReplicaSet {
  const stable = pass.revision.stable;
  if (stable === undefined) throw new Error('a canary pass needs a stable ReplicaSet');
  return stable;
}

/** The stable hash of a canary pass. */
export function stableHashOf(pass: Pass): string {
  return pass.revision.stableHash ?? pass.revision.hash;
}

/** Available canary pods that count as progress: Ready pods that have restarted are crash loops flapping (F5). */
export function honestAvailable(pass: Pass): number {
  const { revision, context } = pass;
  return Math.max(
    0,
    countOf(revision.current).available - countRestartedReadyPods(context.observed.pods, revision.hash),
  );
}

/**
 * The canary's available pods reach `desired` as canary.replicaProgressThreshold counts it: all of them
 * without one, else the threshold's share (a step, the weight sent for it, and the promotion go on then).
 */
export function canaryReached(pass: Pass, desired: number): boolean {
  return (
    honestAvailable(pass) >= replicaProgressTarget(pass.context.canary.replicaProgressThreshold, desired)
  );
}

/** Options for {@link countsAt}: hold the canary (no scale-down), or a weight overriding the step's. */
export interface CountsOptions {
  hold?: boolean;
  weight?: number;
}

/** The canary weight step `index` asks for: its last setWeight, all traffic past the last step. */
export function stepWeightAt(context: RolloutContext, index: number): number {
  return index >= context.steps.length ? fullWeightOf(context) : canaryWeightAt(context.steps, index);
}

/** The stable weight the router holds now, as status records it for this stable; all of it when unknown. */
function stableWeightNow(pass: Pass): number {
  const weights = pass.context.status.canary?.weights;
  return weights !== undefined && weights.stable.podTemplateHash === stableHashOf(pass)
    ? weights.stable.weight
    : fullWeightOf(pass.context);
}

/** The canary weight the router holds now for this canary, as status records it. */
function canaryWeightNow(pass: Pass): number | undefined {
  const weights = pass.context.status.canary?.weights;
  return weights !== undefined && weights.canary.podTemplateHash === pass.revision.hash
    ? weights.canary.weight
    : undefined;
}

/** The replica targets and next safe move at step `index` (past the last step: full promotion). */
export function countsAt(pass: Pass, index: number, options: CountsOptions = {}): CanaryReplicaCounts {
  const { context, revision } = pass;
  if (context.router !== undefined) {
    return routedCanaryReplicaCounts({
      replicas: context.replicas,
      weight: options.weight ?? stepWeightAt(context, index),
      maxTrafficWeight: context.router.maxTrafficWeight,
      budget: context.budget,
      minPodsPerReplicaSet: context.canary.minPodsPerReplicaSet,
      canaryScale: options.weight === undefined ? canaryScaleAt(context.steps, index) : undefined,
      dynamicStableScale: context.canary.dynamicStableScale,
      stableWeightNow: stableWeightNow(pass),
      // An abort or a drain (a given weight) takes the canary down whatever the router says (never blocked).
      ...(options.weight === undefined ? { canaryWeightNow: canaryWeightNow(pass) } : {}),
      holdCanary: options.hold,
      current: {
        canary: countOf(revision.current),
        stable: countOf(stableOf(pass)),
        others: oldCounts(pass.old),
      },
    });
  }
  return canaryReplicaCounts({
    replicas: context.replicas,
    weight: options.weight ?? canaryWeightAt(context.steps, index),
    budget: context.budget,
    minPodsPerReplicaSet: context.canary.minPodsPerReplicaSet,
    canaryScale: options.weight === undefined ? canaryScaleAt(context.steps, index) : undefined,
    holdCanary: options.hold,
    current: {
      canary: countOf(revision.current),
      stable: countOf(stableOf(pass)),
      others: oldCounts(pass.old),
    },
  });
}

/** The step index the replicas aim at: past the last step once promoted in full. */
export function targetIndex(pass: Pass): number {
  return pass.state.promoteFull ? pass.context.steps.length : pass.state.stepIndex;
}

/**
 * With a router, the canary weight that is safe to send at step `index`: the step's weight once the canary
 * ReplicaSet has that step's pods and they are available (as many as canary.replicaProgressThreshold asks);
 * until then the previous setWeight (never more than the step's), and 0 while the canary has no available
 * pod (Argo's rule: never weight to pods that are not ready).
 */
export function safeWeightAt(pass: Pass, index: number): number {
  const { context, revision } = pass;
  const want = stepWeightAt(context, index);
  const rs = revision.current;
  const available = honestAvailable(pass);
  if (rs === undefined || available === 0) return 0;
  const target = countsAt(pass, index).target.canary;
  if (rs.replicas >= target && canaryReached(pass, target)) return want;
  return Math.min(want, canaryWeightAt(context.steps, Math.min(index, context.steps.length) - 1));
}

/**
 * The traffic the router should hold at step `index`: the step's weight (replica ratio), or with a router
 * the weight the canary's available pods can take ({@link safeWeightAt}), and a running experiment step's
 * weighted templates ({@link experimentDestinationsAt}).
 */
export function trafficAt(pass: Pass, index: number): DesiredTraffic {
  const additional = experimentDestinationsAt(pass, index);
  return {
    canaryWeight:
      pass.context.router !== undefined
        ? safeWeightAt(pass, index)
        : canaryWeightAt(pass.context.steps, index),
    stableHash: stableHashOf(pass),
    canaryHash: pass.revision.hash,
    ...(additional.length > 0 && { additional }),
  };
}

/** The router holds `desired` as recorded in status and is not failing. */
export function trafficHolds(pass: Pass, desired: DesiredTraffic): boolean {
  return trafficIsSet(
    pass.context.status,
    desired,
    routerErrorOf(pass.context)?.message,
    fullWeightOf(pass.context),
  );
}

/**
 * The writes that move traffic to `desired`: Service selectors, and the router's weights unless the
 * router is failing and its retry is not due yet (the retry time is the finishing step's to wake for).
 */
export function trafficWrites(
  pass: Pass,
  desired: DesiredTraffic,
  options: { weightsFirst?: boolean } = {},
): RolloutAction[] {
  const { context } = pass;
  const routerError = routerErrorOf(context);
  const writes = planTraffic({
    desired,
    status: context.status,
    routerError: routerError?.message,
    services: context.observed.services,
    canaryService: context.canary.canaryService,
    stableService: context.canary.stableService,
    pingPong: context.canary.pingPong,
    fullWeight: fullWeightOf(context),
    ...(options.weightsFirst === true ? { weightsFirst: true } : {}),
  });
  const retryAt = routerRetryAtMs(context);
  if (retryAt === undefined || context.now.getTime() >= retryAt) return writes;
  return writes.filter((write) => write.kind !== 'setTrafficWeights');
}

/**
 * A superseded canary still has pods to drain. At most one canary runs pods: meanwhile the new one holds
 * and the stable takes the load (weight 0), which also frees the availability budget the drain needs.
 * A previous stable whose scale-down delay ends mid-canary is no canary: it serves no traffic and goes
 * without taking the new canary's weight (counting it routed a canary paused at 20 % to 0 until it went).
 */
export function draining(pass: Pass): boolean {
  return pass.old.some((entry) => entry.due && entry.rs.replicas > 0 && !entry.previousStable);
}

/** The counts this pass moves toward: the target step's, or weight 0 with the canary held while draining. */
export function passCounts(pass: Pass): CanaryReplicaCounts {
  const index = targetIndex(pass);
  if (!draining(pass)) return countsAt(pass, index);
  const counts = countsAt(pass, index, { weight: 0, hold: true });
  return {
    ...counts,
    next: { ...counts.next, canary: Math.min(counts.next.canary, pass.revision.current?.replicas ?? 0) },
  };
}
