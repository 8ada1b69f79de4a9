// The shape every traffic provider fills: which object a router edits, and the pure step from what is read to what to write.
import type { RouteTranslationError } from './route-translation-error.ts';

/** A Kubernetes object as read from (or written to) the API: plain JSON. */
export type RouteObject = Record<string, unknown>;

/**
 * An extra destination of the split: an experiment template's Service and its share (Argo's WeightDestination).
 * Only the routers whose table row says `experimentDestinations` are given any.
 */
export interface RouteDestination {
  serviceName: string;
  /** The template's pods' rollouts-pod-template-hash. */
  podTemplateHash: string;
  weight: number;
}

/**
 * The weights to hold: `canary` to the canary Service, each `additional` destination its weight, the rest
 * ({@link stableShare}) to the stable one.
 */
export interface RouteWeights {
  canary: number;
  /** maxTrafficWeight (100 unless the rollout says otherwise). */
  total: number;
  /** Empty when the provider splits by subset instead (Istio with a DestinationRule). */
  canaryService: string;
  stableService: string;
  /** The stable pods' rollouts-pod-template-hash (subsets are pinned to it). */
  stableHash: string;
  /** The canary pods' hash; absent when there is no canary (all traffic to stable). */
  canaryHash?: string | undefined;
  /** A running experiment step's weighted templates; absent or empty: none. */
  additional?: readonly RouteDestination[] | undefined;
}

/** The stable's share: what the canary and the extra destinations leave of the total (never below 0). */
export function stableShare(weights: RouteWeights): number {
  const others = (weights.additional ?? []).reduce((sum, destination) => sum + destination.weight, 0);
  return Math.max(0, weights.total - weights.canary - others);
}

/** The API a provider's objects live in; `versions` in order of preference (the first one served is used). */
export interface RouteResource {
  group: string;
  versions: readonly string[];
  plural: string;
  kind: string;
  /**
   * Other groups serving the same kind in the same shape (an older release's), used in this order when
   * the cluster does not serve `group`: Traefik v2's `traefik.containo.us` beside v3's `traefik.io`.
   */
  alsoServedAs?: ReadonlyArray<{ group: string; versions: readonly string[] }> | undefined;
}

/** An object a translation is derived from (read, never written): NGINX's stable Ingress. */
export interface RouteSource {
  resource: RouteResource;
  namespace: string;
  name: string;
}

/**
 * One object a router edits. `translate` is pure: given the object as read (undefined when it does
 * not exist), the weights and, when the edit names a `derivedFrom` object, that object as read
 * (undefined when it does not exist), it returns the whole object to write, or a typed error naming
 * the object and the field. Returning an object deep-equal to the one read, or undefined for an
 * object that does not exist and should not be created yet, means "nothing to write"; null means
 * "this object should not exist" (removed when present: only for an object the router owns).
 */
export interface RouteEdit extends ManagedRouteEdits {
  resource: RouteResource;
  namespace: string;
  name: string;
  derivedFrom?: RouteSource | undefined;
  /**
   * Pure, for an object named by another (App Mesh's VirtualRouter, named by the VirtualService): the
   * `derivedFrom` object as read (undefined when absent) → the edit of the object it names, or why it
   * names none. Absent: this edit's own name is the object's.
   */
  resolve?(source: RouteObject | undefined): RouteEdit | RouteTranslationError;
  translate(
    live: RouteObject | undefined,
    weights: RouteWeights,
    source?: RouteObject | undefined,
  ): RouteObject | RouteTranslationError | null | undefined;
  /**
   * Pure: the canary and stable weight of each route of the object as read, in the routes `translate`
   * weights (so `rollgate status` can show what the object holds beside what Rollgate asked for). An
   * empty list: the object carries no weights (a DestinationRule). Absent: the provider cannot say yet.
   */
  readWeights?(live: RouteObject, services: RouteServices): RouteWeightsRead[] | RouteTranslationError;
}

/** The weights one route of an object holds, as read; an unset weight is read as its API's default. */
export interface RouteWeightsRead {
  /** Which route of the object (`rule 0`, `rule web`, `route primary`, `tcp[0]`); empty for the whole object. */
  route: string;
  /** Undefined when the route has no backend for the canary (or stable) Service or subset. */
  canary: number | undefined;
  stable: number | undefined;
}

/** How a header value or a method/path is matched (Argo's StringMatch: one of the three). */
export interface StringMatch {
  exact?: string | undefined;
  prefix?: string | undefined;
  regex?: string | undefined;
}

/** A header route: requests carrying every header in `match` go 100 % to the canary. */
export interface HeaderRoute {
  /** A trafficRouting.managedRoutes name. */
  name: string;
  /** Absent: remove the route. */
  match?: Array<{ headerName: string; headerValue: StringMatch }> | undefined;
}

/** A mirror route: `percentage` % of the requests matching `match` are copied to the canary. */
export interface MirrorRoute {
  name: string;
  /** Absent: remove the route. */
  match?:
    | Array<{
        method?: StringMatch | undefined;
        path?: StringMatch | undefined;
        headers?: Record<string, StringMatch> | undefined;
      }>
    | undefined;
  percentage?: number | undefined;
}

/** The Services a managed route sends to (empty when the provider uses subsets). */
export interface RouteServices {
  canaryService: string;
  stableService: string;
}

/**
 * The managed-route edits of a provider that has them (pure, like `translate`): the object to write
 * with the route added, replaced or (match absent) removed.
 */
export interface ManagedRouteEdits {
  setHeaderRoute?(
    live: RouteObject | undefined,
    route: HeaderRoute,
    services: RouteServices,
  ): RouteObject | RouteTranslationError;
  setMirrorRoute?(
    live: RouteObject | undefined,
    route: MirrorRoute,
    services: RouteServices,
  ): RouteObject | RouteTranslationError;
}
