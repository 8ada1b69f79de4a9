// Sub-planner: traffic — the weights the router should hold and the canary/stable Service selectors.
import type { RolloutStatus } from '../spec/rollout.ts';
import type { ObservedService } from './observed-state.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  type PatchServiceSelectorAction,
  type SetTrafficWeightsAction,
} from './rollout-action.ts';

/** What traffic should look like after this phase. */
export interface DesiredTraffic {
  canaryWeight: number;
  stableHash: string;
  /** Absent when there is no canary: everything goes to stable. */
  canaryHash?: string;
}

type Weights = NonNullable<NonNullable<RolloutStatus['canary']>['weights']>;

/**
 * The status.canary.weights that record `desired` as told to the router; `fullWeight` is the weight of
 * all traffic (the router's maxTrafficWeight, 100 without a router).
 */
export function weightsStatus(desired: DesiredTraffic, fullWeight = 100): Weights {
  return {
    canary: { weight: desired.canaryWeight, podTemplateHash: desired.canaryHash ?? desired.stableHash },
    stable: { weight: fullWeight - desired.canaryWeight, podTemplateHash: desired.stableHash },
  };
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
    weights.stable.podTemplateHash === want.stable.podTemplateHash
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
}): Array<SetTrafficWeightsAction | PatchServiceSelectorAction> {
  const actions: Array<SetTrafficWeightsAction | PatchServiceSelectorAction> = [];
  const selectors: Array<[string | undefined, string]> = [
    [input.stableService, input.desired.stableHash],
    [input.canaryService, input.desired.canaryHash ?? input.desired.stableHash],
  ];
  for (const [serviceName, hash] of selectors) {
    if (serviceName === undefined || serviceName === '') continue;
    const service = input.services.find((candidate) => candidate.name === serviceName);
    if (service === undefined || service.selector[POD_TEMPLATE_HASH_LABEL] === hash) continue;
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
    });
  }
  return actions;
}
