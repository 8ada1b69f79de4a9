// The shape every traffic provider fills: which object a router edits, and the pure step from what is read to what to write.
import type { RouteTranslationError } from './route-translation-error.ts';

/** A Kubernetes object as read from (or written to) the API: plain JSON. */
export type RouteObject = Record<string, unknown>;

/** The weights to hold: `canary` to the canary Service, `total − canary` to the stable one. */
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
}

/** The API a provider's objects live in; `versions` in order of preference (the first one served is used). */
export interface RouteResource {
  group: string;
  versions: readonly string[];
  plural: string;
  kind: string;
}

/**
 * One object a router edits. `translate` is pure: given the object as read (undefined when it does
 * not exist) and the weights, it returns the whole object to write, or a typed error naming the
 * object and the field. Returning an object deep-equal to the one read means "nothing to write".
 */
export interface RouteEdit {
  resource: RouteResource;
  namespace: string;
  name: string;
  translate(live: RouteObject | undefined, weights: RouteWeights): RouteObject | RouteTranslationError;
}
