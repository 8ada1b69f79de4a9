// The traffic-routing edge: how a canary's share of traffic is set, whatever does the routing (a mesh, an ingress).

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
 * A traffic router (a mesh or an ingress). `setWeights` must be idempotent (the same input twice
 * changes nothing the second time). Errors are thrown; the reconciler records them and feeds them
 * back to the planner, and they never block an abort.
 *
 * Without a router (replica ratio, the only mode today) the weight is the replica split the planner
 * already made, and the canaryService / stableService selectors are the planner's own
 * `patchServiceSelector` actions, so there is nothing left for a router to do.
 */
export interface TrafficRouter {
  readonly type: string;
  setWeights(input: TrafficWeightsInput): Promise<void>;
}
