// The two API groups a Rollout may be written in, and the conversion to the in-cluster form.

/** Rollgate's own group: the form Rollouts and analysis objects take inside the cluster (our CRDs). */
export const ROLLGATE_API_VERSION = 'rollgate.dev/v1alpha1';
/** Argo Rollouts' group: accepted as is in Git, converted to {@link ROLLGATE_API_VERSION} on apply. */
export const ARGO_API_VERSION = 'argoproj.io/v1alpha1';
/** The API group of our CRDs (without the version). */
export const ROLLGATE_API_GROUP = 'rollgate.dev';

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
