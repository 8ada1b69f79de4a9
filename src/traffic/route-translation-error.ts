// A route object a router cannot use as it is: missing, malformed, not ours, or without the backends it needs.

/** Stable codes: compare these, not messages. */
export type RouteTranslationCode =
  | 'traffic.route_missing'
  | 'traffic.route_malformed'
  | 'traffic.backend_not_found'
  | 'traffic.route_not_owned'
  | 'traffic.config_invalid';

/**
 * Why a route cannot be written. Names the object (`Kind namespace/name`) and the field, so the
 * message recorded in the Rollout's status says what to fix. A human (or the owner of the route) must
 * act; the rollout waits and the router retries with its backoff.
 */
export class RouteTranslationError extends Error {
  override readonly name = 'RouteTranslationError';
  constructor(
    readonly code: RouteTranslationCode,
    /** `HTTPRoute shop/web`, `TrafficSplit shop/web`, or `Rollout shop/web` for a configuration error. */
    readonly object: string,
    /** The field at fault, e.g. `spec.rules[].backendRefs`. */
    readonly field: string,
    detail: string,
  ) {
    super(`${object}: ${field}: ${detail}`);
  }
}

/** `Kind namespace/name`, as every message names an object. */
export function objectName(kind: string, namespace: string, name: string): string {
  return `${kind} ${namespace}/${name}`;
}
