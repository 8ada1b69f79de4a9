// The two API groups a Rollout may be written in, and the conversion to the in-cluster form.

/** Rollgate's own group: the form Rollouts and analysis objects take inside the cluster (our CRDs). */
export const ROLLGATE_API_VERSION = 'rollgate.dev/v1alpha1';
/** Argo Rollouts' group: accepted as is in Git, converted to {@link ROLLGATE_API_VERSION} on apply. */
export const ARGO_API_VERSION = 'argoproj.io/v1alpha1';
/** The API group of our CRDs (without the version). */
export const ROLLGATE_API_GROUP = 'rollgate.dev';
/** Argo Rollouts' API group (without the version): driven in place in controller mode. */
export const ARGO_API_GROUP = 'argoproj.io';

/** Every apiVersion the spec model accepts for Rollout and analysis kinds. */
export const ACCEPTED_API_VERSIONS = [ARGO_API_VERSION, ROLLGATE_API_VERSION] as const;
export type AcceptedApiVersion = (typeof ACCEPTED_API_VERSIONS)[number];

/**
 * Returns the in-cluster form of an object read from Git: a shallow copy whose `apiVersion` is
 * {@link ROLLGATE_API_VERSION} when it was {@link ARGO_API_VERSION}. Spec, metadata and everything else
 * are the same references, untouched. Objects in any other group are returned as they are.
 */
export function toRollgateApiVersion<T extends { apiVersion?: unknown }>(obj: T): T {
  if (obj.apiVersion !== ARGO_API_VERSION) return obj;
  return { ...obj, apiVersion: ROLLGATE_API_VERSION };
}

/**
 * The form an object read from Git is applied in, when the sync applies Rollouts and analysis kinds in
 * `target`: {@link toRollgateApiVersion} for rollgate.dev (the default); for argoproj.io (a process
 * driving only Argo's group, docs/controller-mode.md) Argo's objects as they are and a
 * `rollgate.dev/v1alpha1` one moved to argoproj.io, so one Rollout is never in both groups.
 */
export function toAppliedApiVersion<T extends { apiVersion?: unknown }>(
  obj: T,
  target: AcceptedApiVersion,
): T {
  if (target === ROLLGATE_API_VERSION) return toRollgateApiVersion(obj);
  if (obj.apiVersion !== ROLLGATE_API_VERSION) return obj;
  return { ...obj, apiVersion: target };
}
