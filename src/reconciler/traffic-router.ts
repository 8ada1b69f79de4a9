// The traffic-routing edge: how a canary's share of traffic is set, whatever does the routing (a mesh, an ingress).
import type { Rollout } from '../manifest/rollout.ts';

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
  /** A running experiment step's weighted templates: each its weight to its Service, out of the stable's share. */
  additional?: readonly RouteDestination[] | undefined;
}

/** An extra destination of a route (an experiment template's Service), beside canary and stable. */
export interface RouteDestination {
  serviceName: string;
  podTemplateHash: string;
  weight: number;
}

/**
 * A traffic router (a mesh or an ingress). `setWeights` must be idempotent (the same input twice
 * changes nothing the second time). Errors are thrown; the reconciler records them and feeds them
 * back to the planner, and they never block an abort.
 *
 * Without a router (replica ratio: no trafficRouting) the weight is the replica split the planner
 * already made, and the canaryService / stableService selectors are the planner's own
 * `patchServiceSelector` actions, so there is nothing left for a router to do.
 */
export interface TrafficRouter {
  readonly type: string;
  /** Resolves with the objects it had to change, when it can tell (none: the routes already held the weights). */
  setWeights(input: TrafficWeightsInput): Promise<TrafficWeightsResult | void>;
  /** Adds, replaces or (match absent) removes a header route; absent when the router has none. */
  setHeaderRoute?(input: HeaderRouteInput): Promise<void>;
  /** Adds, replaces or (match absent) removes a mirror route; absent when the router has none. */
  setMirrorRoute?(input: MirrorRouteInput): Promise<void>;
}

/** What a setWeights call changed: the route objects written (`HTTPRoute shop/web`), empty when none. */
export interface TrafficWeightsResult {
  changed: string[];
}

/** The weights one route of an object holds, as read (src/traffic's readers fill this shape). */
export interface RouteWeightsRead {
  /** Which route of the object (`rule 0`, `route primary`); empty for the whole object. */
  route: string;
  canary: number | undefined;
  stable: number | undefined;
}

/** How a header value, method or path is matched (one of the three). */
export interface RouteStringMatch {
  exact?: string | undefined;
  prefix?: string | undefined;
  regex?: string | undefined;
}

/** A header route (Argo's setHeaderRoute step): `match` absent removes it. */
export interface HeaderRouteInput {
  name: string;
  match?: Array<{ headerName: string; headerValue: RouteStringMatch }> | undefined;
}

/** A mirror route (Argo's setMirrorRoute step): `match` absent removes it. */
export interface MirrorRouteInput {
  name: string;
  match?:
    | Array<{
        method?: RouteStringMatch | undefined;
        path?: RouteStringMatch | undefined;
        headers?: Record<string, RouteStringMatch> | undefined;
      }>
    | undefined;
  percentage?: number | undefined;
}

/** The weights a route should hold: `canary` to canaryService, `total − canary` to stableService. */
export interface RouteWeights {
  canary: number;
  total: number;
  /** Empty when the provider splits by subset instead (Istio with a DestinationRule). */
  canaryService: string;
  stableService: string;
  stableHash: string;
  canaryHash?: string | undefined;
  /** Extra destinations; the stable gets `total − canary − their weights`. */
  additional?: readonly RouteDestination[] | undefined;
}

/** The API of a route object: its group, the versions tried in order, plural and kind. */
export interface RouteTargetResource {
  group: string;
  versions: readonly string[];
  plural: string;
  kind: string;
  /** Other groups serving the same kind, tried in order when `group` is not served (Traefik v2's). */
  alsoServedAs?: ReadonlyArray<{ group: string; versions: readonly string[] }> | undefined;
}

/**
 * One object a router edits, as the edge sees it (src/traffic's translators fill this shape; the
 * edge does not import them). `translate` is pure: the object as read (undefined when absent), the
 * weights and the `derivedFrom` object as read (undefined when absent or not named) → the whole
 * object to write, undefined to leave an absent object absent, null to remove the object (one the
 * router owns: Ambassador's canary Mapping), or an Error naming the object and field (thrown as is).
 */
export interface RouteTarget {
  resource: RouteTargetResource;
  namespace: string;
  name: string;
  /** An object the translation is derived from: read before each translation, never written. */
  derivedFrom?: { resource: RouteTargetResource; namespace: string; name: string } | undefined;
  /** Pure: the `derivedFrom` object as read → the target of the object it names (App Mesh's VirtualRouter). */
  resolve?(source: Record<string, unknown> | undefined): RouteTarget | Error;
  translate(
    live: Record<string, unknown> | undefined,
    weights: RouteWeights,
    source?: Record<string, unknown> | undefined,
  ): Record<string, unknown> | Error | null | undefined;
  /** Pure: the weights each route of the object holds (absent: the provider cannot read them back yet). */
  readWeights?(
    live: Record<string, unknown>,
    services: { canaryService: string; stableService: string },
  ): RouteWeightsRead[] | Error;
  /** Pure, like `translate`: the object with the header route set or removed (providers that have them). */
  setHeaderRoute?(
    live: Record<string, unknown> | undefined,
    route: HeaderRouteInput,
    services: { canaryService: string; stableService: string },
  ): Record<string, unknown> | Error;
  setMirrorRoute?(
    live: Record<string, unknown> | undefined,
    route: MirrorRouteInput,
    services: { canaryService: string; stableService: string },
  ): Record<string, unknown> | Error;
}

/**
 * The router for one rollout, chosen from its `strategy.canary.trafficRouting`; undefined when it
 * sets none (replica ratio: the planner's scale and selector writes are the split).
 */
export type TrafficRouterFactory = (rollout: Rollout) => TrafficRouter | undefined;
