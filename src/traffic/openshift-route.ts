// OpenShift Routes: the stable Service's weight in spec.to, the canary Service as the only alternate backend (route.openshift.io).
import type {
  RouteEdit,
  RouteObject,
  RouteResource,
  RouteServices,
  RouteWeights,
  RouteWeightsRead,
} from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

/** Route serves route.openshift.io/v1 only (what the OpenShift plugin uses too). */
export const OPENSHIFT_ROUTE_RESOURCE = {
  group: 'route.openshift.io',
  versions: ['v1'],
  plural: 'routes',
  kind: 'Route',
} as const satisfies RouteResource;

/** A Route backend's weight when unset, and the most it may be (the CRD's default and maximum). */
const ROUTE_DEFAULT_WEIGHT = 100;
const ROUTE_MAX_WEIGHT = 256;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A backend reference to the Service `service` (the kind defaults to Service; "" means the same). */
function isServiceRef(ref: unknown, service: string): ref is Record<string, unknown> {
  return (
    isRecord(ref) &&
    ref['name'] === service &&
    (ref['kind'] === undefined || ref['kind'] === 'Service' || ref['kind'] === '')
  );
}

function weightOf(ref: Record<string, unknown>): number {
  return typeof ref['weight'] === 'number' ? ref['weight'] : ROUTE_DEFAULT_WEIGHT;
}

/**
 * The edit of one Route, as the plugin makes it: `spec.to` (which must be stableService) gets
 * maxTrafficWeight − W, and `spec.alternateBackends` is the canary Service alone with weight W, or is
 * removed at W = 0. Other alternate backends are dropped (a Route's weights are relative: the canary
 * gets W % only when these two are all there is). Every other field stays as read; the Route is the
 * user's, never created.
 */
export function openShiftRouteEdit(name: string, namespace: string): RouteEdit {
  const id = objectName('Route', namespace, name);
  return {
    resource: OPENSHIFT_ROUTE_RESOURCE,
    namespace,
    name,
    translate: (live, weights) => routeWith(id, live, weights),
    readWeights: (live, services) => readRouteWeights(id, live, services),
  };
}

/** `spec.to`, checked to be the stable Service. */
function stableTarget(
  id: string,
  live: RouteObject,
  stableService: string,
): Record<string, unknown> | RouteTranslationError {
  const spec = live['spec'];
  const to = isRecord(spec) ? spec['to'] : undefined;
  if (!isRecord(to))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.to', 'missing or not an object');
  if (!isServiceRef(to, stableService))
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      'spec.to.name',
      `sends to ${JSON.stringify(to['name'] ?? null)}, not to the stableService "${stableService}"`,
    );
  return to;
}

function routeWith(
  id: string,
  live: RouteObject | undefined,
  weights: RouteWeights,
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  if (weights.total > ROUTE_MAX_WEIGHT)
    return new RouteTranslationError(
      'traffic.config_invalid',
      id,
      'spec.to.weight',
      `maxTrafficWeight ${weights.total} is above the ${ROUTE_MAX_WEIGHT} a Route weight may be`,
    );
  const to = stableTarget(id, live, weights.stableService);
  if (to instanceof RouteTranslationError) return to;
  const { alternateBackends: _dropped, ...spec } = live['spec'] as Record<string, unknown>;
  const written: Record<string, unknown> = { ...spec, to: { ...to, weight: weights.total - weights.canary } };
  if (weights.canary > 0)
    written['alternateBackends'] = [{ kind: 'Service', name: weights.canaryService, weight: weights.canary }];
  return { ...live, spec: written };
}

/** The stable weight in `spec.to` and the canary's among the alternate backends (none: 0). */
function readRouteWeights(
  id: string,
  live: RouteObject,
  services: RouteServices,
): RouteWeightsRead[] | RouteTranslationError {
  const spec = isRecord(live['spec']) ? live['spec'] : {};
  const to = spec['to'];
  if (!isRecord(to))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.to', 'missing or not an object');
  const alternates = Array.isArray(spec['alternateBackends']) ? spec['alternateBackends'] : [];
  const canary = alternates.find((ref) => isServiceRef(ref, services.canaryService));
  return [
    {
      route: '',
      canary: canary === undefined ? 0 : weightOf(canary),
      stable: isServiceRef(to, services.stableService) ? weightOf(to) : undefined,
    },
  ];
}
