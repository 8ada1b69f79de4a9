// NGINX Ingress: the rollout's canary Ingress per stable Ingress, its backends on canaryService and its canary-weight annotation.
import { ROLLGATE_API_VERSION } from '../manifest/api-version.ts';
import type { NginxConfig } from '../manifest/traffic-routing.ts';
import type { RouteEdit, RouteObject, RouteResource, RouteWeights, RouteWeightsRead } from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

/** Ingress, networking.k8s.io/v1 only (extensions/v1beta1 left Kubernetes in 1.22). */
export const INGRESS_RESOURCE = {
  group: 'networking.k8s.io',
  versions: ['v1'],
  plural: 'ingresses',
  kind: 'Ingress',
} as const satisfies RouteResource;

/** The ingress class annotation the NGINX controller selects Ingresses by; the canary must keep it. */
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** Longest object name Kubernetes accepts. */
const MAX_NAME = 253;
const CANARY_SUFFIX = '-canary';

/** The rollout that owns its canary Ingresses (their controller ownerReference). */
export interface IngressOwner {
  name: string;
  uid: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `<rollout>-<stableIngress>-canary`, the name Argo Rollouts gives it (so a rollout moved from Argo
 * finds its canary Ingress), with the prefix cut so the whole fits in 253 characters.
 */
export function canaryIngressName(rollout: string, stableIngress: string): string {
  return `${`${rollout}-${stableIngress}`.slice(0, MAX_NAME - CANARY_SUFFIX.length)}${CANARY_SUFFIX}`;
}

/**
 * The edit of the canary Ingress of one stable Ingress. The stable Ingress is only read (it keeps
 * sending to stableService; NGINX sends the canary-weight share of its hosts and paths to the canary
 * Ingress instead). The canary Ingress is Rollgate's: created once a canary exists, then replaced;
 * one that is not controlled by the rollout is refused, as Argo does, since it would be fought over.
 */
export function canaryIngressEdit(
  config: NginxConfig,
  stableIngress: string,
  namespace: string,
  owner: IngressOwner,
): RouteEdit {
  const name = canaryIngressName(owner.name, stableIngress);
  return {
    resource: INGRESS_RESOURCE,
    namespace,
    name,
    derivedFrom: { resource: INGRESS_RESOURCE, namespace, name: stableIngress },
    translate: (live, weights, stable) =>
      canaryIngressWith({ config, name, namespace, owner, stableIngress }, live, weights, stable),
    readWeights: (live) =>
      readCanaryIngressWeights(config.annotationPrefix, objectName('Ingress', namespace, name), live),
  };
}

/**
 * The weights a canary Ingress holds: NGINX sends `canary-weight` out of `canary-weight-total` (100 when
 * absent) to it, and the rest to the stable Ingress's backends.
 */
export function readCanaryIngressWeights(
  prefix: string,
  id: string,
  live: RouteObject,
): RouteWeightsRead[] | RouteTranslationError {
  const metadata = isRecord(live['metadata']) ? live['metadata'] : {};
  const annotations = isRecord(metadata['annotations']) ? metadata['annotations'] : {};
  const number = (key: string, fallback: number | undefined): number | undefined | RouteTranslationError => {
    const value = annotations[`${prefix}/${key}`];
    if (value === undefined) return fallback;
    const parsed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
    return Number.isNaN(parsed)
      ? new RouteTranslationError(
          'traffic.route_malformed',
          id,
          `metadata.annotations.${prefix}/${key}`,
          'not a whole number',
        )
      : parsed;
  };
  const canary = number('canary-weight', 0);
  const total = number('canary-weight-total', 100);
  if (canary instanceof RouteTranslationError) return canary;
  if (total instanceof RouteTranslationError) return total;
  return [
    { route: '', canary, stable: total === undefined || canary === undefined ? undefined : total - canary },
  ];
}

interface CanaryIngressContext {
  config: NginxConfig;
  name: string;
  namespace: string;
  owner: IngressOwner;
  stableIngress: string;
}

function canaryIngressWith(
  context: CanaryIngressContext,
  live: RouteObject | undefined,
  weights: RouteWeights,
  stable: RouteObject | undefined,
): RouteObject | RouteTranslationError | undefined {
  const { config, name, namespace, owner } = context;
  const stableId = objectName('Ingress', namespace, context.stableIngress);
  // Checked on every call, a rollout at rest included, so a missing stable Ingress is reported before a canary needs it.
  if (stable === undefined)
    return new RouteTranslationError(
      'traffic.route_missing',
      stableId,
      'metadata.name',
      `not found (the stableIngress of Rollout ${namespace}/${owner.name})`,
    );
  const spec = canarySpec(stableId, stable, weights);
  if (spec instanceof RouteTranslationError) return spec;
  // Nothing to route to the canary yet: no canary Ingress is created for a rollout at rest.
  if (live === undefined && weights.canaryHash === undefined && weights.canary === 0) return undefined;
  const annotations = canaryAnnotations(config, stable, weights);
  if (live === undefined) {
    const ownerReference = {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      name: owner.name,
      uid: owner.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    return {
      kind: INGRESS_RESOURCE.kind,
      metadata: { name, namespace, annotations, ownerReferences: [ownerReference] },
      spec,
    };
  }
  const metadata = isRecord(live['metadata']) ? live['metadata'] : {};
  const references = metadata['ownerReferences'];
  const owned =
    Array.isArray(references) &&
    references.some(
      (ref: unknown) => isRecord(ref) && ref['controller'] === true && ref['uid'] === owner.uid,
    );
  if (!owned)
    return new RouteTranslationError(
      'traffic.route_not_owned',
      objectName('Ingress', namespace, name),
      'metadata.ownerReferences',
      `not controlled by Rollout ${namespace}/${owner.name}; delete it (Rollgate creates its own)`,
    );
  // Annotations and spec are Rollgate's whole (as Argo's patch makes them); the rest of metadata is kept as read.
  return { ...live, metadata: { ...metadata, annotations }, spec };
}

/**
 * The canary Ingress's spec, as Argo builds it: the stable Ingress's rules that send to stableService,
 * those paths sent to canaryService instead (other paths of such a rule kept as they are), its TLS
 * and ingressClassName. Rules that never send to stableService are left out; none at all is an error.
 */
function canarySpec(
  stableId: string,
  stable: RouteObject,
  weights: RouteWeights,
): Record<string, unknown> | RouteTranslationError {
  const spec = stable['spec'];
  if (!isRecord(spec))
    return new RouteTranslationError('traffic.route_malformed', stableId, 'spec', 'missing');
  const rules = spec['rules'];
  if (rules !== undefined && !Array.isArray(rules))
    return new RouteTranslationError('traffic.route_malformed', stableId, 'spec.rules', 'not a list');
  const canaryRules = (rules ?? []).flatMap((rule: unknown) => {
    const http = isRecord(rule) ? rule['http'] : undefined;
    const paths = isRecord(http) ? http['paths'] : undefined;
    if (!isRecord(rule) || !isRecord(http) || !Array.isArray(paths)) return [];
    let sendsToStable = false;
    const canaryPaths = paths.map((path: unknown) => {
      const backend = isRecord(path) ? path['backend'] : undefined;
      const service = isRecord(backend) ? backend['service'] : undefined;
      if (!isRecord(path) || !isRecord(backend) || !isRecord(service)) return path;
      if (service['name'] !== weights.stableService) return path;
      sendsToStable = true;
      return { ...path, backend: { ...backend, service: { ...service, name: weights.canaryService } } };
    });
    return sendsToStable ? [{ ...rule, http: { ...http, paths: canaryPaths } }] : [];
  });
  if (canaryRules.length === 0)
    return new RouteTranslationError(
      'traffic.backend_not_found',
      stableId,
      'spec.rules[].http.paths[].backend.service.name',
      `no path sends to the stableService "${weights.stableService}"`,
    );
  return {
    ...(spec['ingressClassName'] !== undefined ? { ingressClassName: spec['ingressClassName'] } : {}),
    ...(spec['tls'] !== undefined ? { tls: spec['tls'] } : {}),
    rules: canaryRules,
  };
}

/**
 * The canary Ingress's annotations: the stable one's ingress class (NGINX pairs the two Ingresses only
 * within a class), the additional annotations (prefixed unless they already are), the canary
 * annotations as written, then `canary`, `canary-weight` and, with a maxTrafficWeight other than 100,
 * `canary-weight-total` (NGINX's default total is 100), which no other annotation may override.
 */
function canaryAnnotations(
  config: NginxConfig,
  stable: RouteObject,
  weights: RouteWeights,
): Record<string, string> {
  const prefix = config.annotationPrefix;
  const metadata = stable['metadata'];
  const stableAnnotations = isRecord(metadata) ? metadata['annotations'] : undefined;
  const ingressClass = isRecord(stableAnnotations) ? stableAnnotations[INGRESS_CLASS_ANNOTATION] : undefined;
  const annotations: Record<string, string> = {};
  if (typeof ingressClass === 'string') annotations[INGRESS_CLASS_ANNOTATION] = ingressClass;
  for (const [key, value] of Object.entries(config.additionalIngressAnnotations))
    annotations[key.startsWith(prefix) ? key : `${prefix}/${key}`] = value;
  Object.assign(annotations, config.canaryIngressAnnotations);
  annotations[`${prefix}/canary`] = 'true';
  annotations[`${prefix}/canary-weight`] = String(weights.canary);
  if (weights.total !== 100) annotations[`${prefix}/canary-weight-total`] = String(weights.total);
  return annotations;
}
