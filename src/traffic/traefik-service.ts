// Traefik: the weights of canaryService and stableService in a weighted TraefikService (traefik.io).
import type { TraefikConfig } from '../manifest/traffic-routing.ts';
import type {
  RouteEdit,
  RouteObject,
  RouteResource,
  RouteServices,
  RouteWeights,
  RouteWeightsRead,
} from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

/**
 * TraefikService of Traefik v3 (`traefik.io`), the group Argo Rollouts uses by default; on a cluster
 * that serves only Traefik v2's `traefik.containo.us` (same kind, same weighted shape), that one. Argo
 * needs a controller flag for v2; here discovery decides.
 */
export const TRAEFIK_SERVICE_RESOURCE = {
  group: 'traefik.io',
  versions: ['v1alpha1'],
  plural: 'traefikservices',
  kind: 'TraefikService',
  alsoServedAs: [{ group: 'traefik.containo.us', versions: ['v1alpha1'] }],
} as const satisfies RouteResource;

/** Traefik's weighted round robin gives a service without `weight` this weight. */
const TRAEFIK_DEFAULT_WEIGHT = 1;

const SERVICES_FIELD = 'spec.weighted.services';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The edit of the TraefikService named by `weightedTraefikServiceName`: in `spec.weighted.services`,
 * the entry naming canaryService gets the canary weight and the one naming stableService the rest of
 * maxTrafficWeight. The object is the user's (never created); everything else in it stays as read.
 */
export function traefikServiceEdit(config: TraefikConfig, namespace: string): RouteEdit {
  const name = config.weightedTraefikServiceName;
  const id = objectName('TraefikService', namespace, name);
  return {
    resource: TRAEFIK_SERVICE_RESOURCE,
    namespace,
    name,
    translate: (live, weights) => weightedWith(id, live, weights),
    readWeights: (live, services) => readTraefikWeights(id, live, services),
  };
}

/** The weighted services list of the object, or the error naming what is wrong with it. */
function weightedServices(id: string, live: RouteObject): unknown[] | RouteTranslationError {
  const spec = live['spec'];
  const weighted = isRecord(spec) ? spec['weighted'] : undefined;
  const services = isRecord(weighted) ? weighted['services'] : undefined;
  if (!Array.isArray(services))
    return new RouteTranslationError(
      'traffic.route_malformed',
      id,
      SERVICES_FIELD,
      'missing or not a list (the TraefikService must be a weighted round robin)',
    );
  return services;
}

/**
 * Whether an entry is the Kubernetes Service `service`: an entry of kind TraefikService (a nested
 * load balancer of the same name) is not.
 */
function isServiceEntry(entry: unknown, service: string): entry is Record<string, unknown> {
  return (
    isRecord(entry) &&
    entry['name'] === service &&
    (entry['kind'] === undefined || entry['kind'] === 'Service')
  );
}

function weightedWith(
  id: string,
  live: RouteObject | undefined,
  weights: RouteWeights,
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const services = weightedServices(id, live);
  if (services instanceof RouteTranslationError) return services;
  for (const [role, service] of [
    ['canaryService', weights.canaryService],
    ['stableService', weights.stableService],
  ] as const)
    if (!services.some((entry) => isServiceEntry(entry, service)))
      return new RouteTranslationError(
        'traffic.backend_not_found',
        id,
        SERVICES_FIELD,
        `no service names the ${role} "${service}"`,
      );
  const weightOf = (entry: unknown): number | undefined =>
    isServiceEntry(entry, weights.canaryService)
      ? weights.canary
      : isServiceEntry(entry, weights.stableService)
        ? weights.total - weights.canary
        : undefined;
  const written = services.map((entry) => {
    const weight = weightOf(entry);
    return weight === undefined ? entry : { ...(entry as Record<string, unknown>), weight };
  });
  const spec = live['spec'] as Record<string, unknown>;
  const weighted = spec['weighted'] as Record<string, unknown>;
  return { ...live, spec: { ...spec, weighted: { ...weighted, services: written } } };
}

/** The weight of the entry for `service` (Traefik's default when unset), undefined without one. */
function entryWeight(services: unknown[], service: string): number | undefined {
  const entry = services.find((candidate) => isServiceEntry(candidate, service));
  if (entry === undefined) return undefined;
  const weight = entry['weight'];
  return typeof weight === 'number' ? weight : TRAEFIK_DEFAULT_WEIGHT;
}

/** The two services' weights, as one entry for the whole TraefikService. */
function readTraefikWeights(
  id: string,
  live: RouteObject,
  services: RouteServices,
): RouteWeightsRead[] | RouteTranslationError {
  const list = weightedServices(id, live);
  if (list instanceof RouteTranslationError) return list;
  return [
    {
      route: '',
      canary: entryWeight(list, services.canaryService),
      stable: entryWeight(list, services.stableService),
    },
  ];
}
