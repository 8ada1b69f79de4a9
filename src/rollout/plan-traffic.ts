// Sub-planner: traffic — the weights the router should hold and the canary/stable Service selectors.
import {
  nextStablePingPong,
  pingPongRoles,
  type PingPongConfig,
  type PingPongRoles,
} from '../manifest/alb-traffic-routing.ts';
import type { RolloutStatus } from '../manifest/rollout.ts';
import type { ObservedService } from './observed-state.ts';
import { sameJson } from './same-json.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  type ExperimentTrafficDestination,
  type PatchServiceSelectorAction,
  type ReassertTrafficWeightsAction,
  type SetTrafficWeightsAction,
} from './rollout-action.ts';
import type { RolloutPlan } from './rollout-plan.ts';

/** What traffic should look like after this phase. */
export interface DesiredTraffic {
  canaryWeight: number;
  stableHash: string;
  /** Absent when there is no canary: everything goes to stable. */
  canaryHash?: string;
  /** The weighted templates of a running experiment step; their weights come out of the stable's share. */
  additional?: readonly ExperimentTrafficDestination[];
}

type Weights = NonNullable<NonNullable<RolloutStatus['canary']>['weights']>;

/**
 * The status.canary.weights that record `desired` as told to the router; `fullWeight` is the weight of
 * all traffic (the router's maxTrafficWeight, 100 without a router).
 */
export function weightsStatus(desired: DesiredTraffic, fullWeight = 100): Weights {
  const additional = desired.additional ?? [];
  const others = additional.reduce((sum, destination) => sum + destination.weight, 0);
  return {
    canary: { weight: desired.canaryWeight, podTemplateHash: desired.canaryHash ?? desired.stableHash },
    stable: { weight: fullWeight - desired.canaryWeight - others, podTemplateHash: desired.stableHash },
    ...(additional.length > 0 && { additional: additional.map((destination) => ({ ...destination })) }),
  };
}

/** The experiment destinations a status records (entries without a Service name route nowhere and are left out). */
function recordedDestinations(weights: Weights | undefined): ExperimentTrafficDestination[] {
  return (weights?.additional ?? []).flatMap((destination) =>
    destination.serviceName
      ? [
          {
            serviceName: destination.serviceName,
            podTemplateHash: destination.podTemplateHash ?? '',
            weight: destination.weight,
          },
        ]
      : [],
  );
}

/** The router already holds `desired` (as recorded in status) and reported no error since. */
export function trafficIsSet(
  status: RolloutStatus,
  desired: DesiredTraffic,
  routerError: string | undefined,
  fullWeight = 100,
): boolean {
  const weights = status.canary?.weights;
  const want = weightsStatus(desired, fullWeight);
  return (
    routerError === undefined &&
    weights !== undefined &&
    weights.canary.weight === want.canary.weight &&
    weights.canary.podTemplateHash === want.canary.podTemplateHash &&
    weights.stable.weight === want.stable.weight &&
    weights.stable.podTemplateHash === want.stable.podTemplateHash &&
    sameJson(recordedDestinations(weights), recordedDestinations(want))
  );
}

/**
 * The traffic writes needed to reach `desired`: Service selectors (stableService → stable hash,
 * canaryService → canary hash, or stable when there is no canary) and the router weights. Empty when all
 * are in place. Named Services that were not observed are skipped (reported by the executor's reader).
 */
export function planTraffic(input: {
  desired: DesiredTraffic;
  status: RolloutStatus;
  routerError?: string;
  services: readonly ObservedService[];
  canaryService?: string;
  stableService?: string;
  /** The weight of all traffic (maxTrafficWeight); 100 without a router. */
  fullWeight?: number;
  /** The router's weights go before the Service selectors (an abort: traffic leaves the canary first). */
  weightsFirst?: boolean;
  /** canary.pingPong: the ping and pong Services take the roles instead of selector switches. */
  pingPong?: PingPongConfig | undefined;
}): Array<SetTrafficWeightsAction | PatchServiceSelectorAction> {
  const actions: Array<SetTrafficWeightsAction | PatchServiceSelectorAction> = [];
  const roles = input.pingPong && pingPongRolesFor(input.pingPong, input.status, input.desired.stableHash);
  const selectors: Array<[string | undefined, string | undefined, 'always' | 'unpinned']> = [
    [input.stableService, input.desired.stableHash, 'always'],
    [input.canaryService, input.desired.canaryHash ?? input.desired.stableHash, 'always'],
    // Ping-pong: the canary's Service is pointed at the canary once, and the stable one keeps its pods
    // (pinned only if it selects no hash yet, the first canary after the first revision).
    [roles?.canaryService, input.desired.canaryHash, 'always'],
    [roles?.stableService, input.desired.stableHash, 'unpinned'],
  ];
  for (const [serviceName, hash, when] of selectors) {
    if (serviceName === undefined || serviceName === '' || hash === undefined) continue;
    const service = input.services.find((candidate) => candidate.name === serviceName);
    if (service === undefined || service.selector[POD_TEMPLATE_HASH_LABEL] === hash) continue;
    if (when === 'unpinned' && service.selector[POD_TEMPLATE_HASH_LABEL] !== undefined) continue;
    if (actions.some((a) => a.kind === 'patchServiceSelector' && a.service === service.name)) continue;
    actions.push({
      kind: 'patchServiceSelector',
      service: service.name,
      resourceVersion: service.resourceVersion,
      podTemplateHash: hash,
    });
  }
  if (!trafficIsSet(input.status, input.desired, input.routerError, input.fullWeight)) {
    actions[input.weightsFirst === true ? 'unshift' : 'push']({
      kind: 'setTrafficWeights',
      canaryWeight: input.desired.canaryWeight,
      stableHash: input.desired.stableHash,
      ...(input.desired.canaryHash !== undefined ? { canaryHash: input.desired.canaryHash } : {}),
      ...((input.desired.additional ?? []).length > 0 && {
        additional: (input.desired.additional ?? []).map((destination) => ({ ...destination })),
      }),
      ...(roles !== undefined ? { services: roles } : {}),
    });
  }
  return actions;
}

/**
 * The ping-pong roles once a pass with `stableHash` as its stable is recorded: swapped when the stable
 * hash changes (the promotion), as status.canary.stablePingPong will say (finish-pass writes the same).
 */
export function pingPongRolesFor(
  pingPong: PingPongConfig,
  live: RolloutStatus,
  stableHash: string,
): PingPongRoles {
  return pingPongRoles(pingPong, nextStablePingPong(live.canary?.stablePingPong, live.stableRS, stableHash));
}

/** The weights a status records as told to the router, as the action that holds them; none recorded: undefined. */
export function recordedWeights(
  status: RolloutStatus,
  pingPong?: PingPongConfig,
): ReassertTrafficWeightsAction | undefined {
  const weights = status.canary?.weights;
  const stableHash = weights?.stable.podTemplateHash;
  if (weights === undefined || stableHash === undefined) return undefined;
  const canaryHash = weights.canary.podTemplateHash;
  const additional = recordedDestinations(weights);
  return {
    kind: 'reassertTrafficWeights',
    canaryWeight: weights.canary.weight,
    stableHash,
    ...(canaryHash !== undefined && canaryHash !== stableHash ? { canaryHash } : {}),
    ...(additional.length > 0 && { additional }),
    ...(pingPong !== undefined ? { services: pingPongRoles(pingPong, status.canary?.stablePingPong) } : {}),
  };
}

/**
 * Drift correction, the last word of a pass: `plan` with a reassertTrafficWeights of the recorded weights
 * when the pass is at rest, else `plan` as it is. planTraffic sends weights only when what the planner
 * wants changes, and a hand edit of a route object changes nothing the planner reads; so a pass with
 * nothing to do holds the recorded weights, and the router puts back a route that no longer has them
 * (writing nothing when all do). At rest means: a router, no action, the status left as it is and no
 * router failure. A pass that acts or moves the status is mid-change (right after a router write whose
 * status write was lost, the status lags the route and planTraffic sends the weights itself), and a
 * failing router's retry is timed by its own backoff. `requeueAfterMs` is kept: holding the weights is
 * never a reason to look again sooner.
 */
export function planTrafficAtRest(input: {
  plan: RolloutPlan;
  /** The live status the pass was planned from. */
  live: RolloutStatus;
  routed: boolean;
  routerError?: string | undefined;
  pingPong?: PingPongConfig | undefined;
}): RolloutPlan {
  const { plan, live } = input;
  if (!input.routed || input.routerError !== undefined || plan.actions.length > 0) return plan;
  if (!sameJson(plan.status, live)) return plan;
  const hold = recordedWeights(live, input.pingPong);
  return hold === undefined ? plan : { ...plan, actions: [hold] };
}
