// The traffic-routing contract: how a canary's share of traffic is set and checked, whatever does the routing.

/** What a router needs to send `canaryWeight` % of traffic to the canary and the rest to stable. */
export interface TrafficWeightsInput {
  namespace: string;
  rollout: string;
  /** 0..100; 0 means everything to stable (also the abort position). */
  canaryWeight: number;
  stableHash: string;
  /** Absent when there is no canary (completed or aborted): all routing points at stable. */
  canaryHash?: string | undefined;
  canaryService?: string | undefined;
  stableService?: string | undefined;
}

/**
 * A traffic router. `setWeights` must be idempotent (the same input twice changes nothing the second
 * time); `verify` says whether the last weights are in effect. Errors are thrown; the reconciler
 * records them and feeds them back to the planner, and they never block an abort.
 */
export interface TrafficRouter {
  readonly type: string;
  setWeights(input: TrafficWeightsInput): Promise<void>;
  verify(input: TrafficWeightsInput): Promise<boolean>;
}

/** A router call failed; carries the router type and the rollout, and keeps the cause. */
export class TrafficRouterError extends Error {
  override readonly name = 'TrafficRouterError';
  readonly code = 'traffic.router_failed';
  constructor(
    readonly router: string,
    readonly rollout: { namespace: string; name: string },
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`traffic router ${router} for ${rollout.namespace}/${rollout.name}: ${message}`, options);
  }
}
