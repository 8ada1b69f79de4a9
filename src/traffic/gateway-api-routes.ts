// Gateway API: the canary and stable weights on the backendRefs of an HTTPRoute, GRPCRoute or TCPRoute.
import type { GatewayRouteKind, GatewayRouteRef } from '../spec/traffic-routing.ts';
import type { RouteEdit, RouteObject, RouteResource, RouteWeights } from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

const GROUP = 'gateway.networking.k8s.io';

/** The route kinds Rollgate edits, with the API versions tried in order (the first one served wins). */
export const GATEWAY_API_RESOURCES = {
  HTTPRoute: { group: GROUP, versions: ['v1', 'v1beta1'], plural: 'httproutes', kind: 'HTTPRoute' },
  GRPCRoute: { group: GROUP, versions: ['v1', 'v1alpha2'], plural: 'grpcroutes', kind: 'GRPCRoute' },
  TCPRoute: { group: GROUP, versions: ['v1', 'v1alpha2'], plural: 'tcproutes', kind: 'TCPRoute' },
} as const satisfies Record<GatewayRouteKind, RouteResource>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The edit of one route: sets `weights.canary` on every backendRef named canaryService and
 * `total − canary` on every one named stableService, in every rule but the managed ones (header
 * routes Rollgate or the plugin added, named in `managedRoutes`). Other rules, other backends and
 * every other field are kept as read. A route without a backendRef for either Service is refused:
 * writing half a split would send traffic nowhere anyone asked for.
 */
export function gatewayRouteEdit(
  ref: GatewayRouteRef,
  namespace: string,
  managedRouteNames: readonly string[],
): RouteEdit {
  const resource = GATEWAY_API_RESOURCES[ref.kind];
  const id = objectName(ref.kind, namespace, ref.name);
  return {
    resource,
    namespace,
    name: ref.name,
    translate: (live, weights) => setBackendWeights(id, live, weights, managedRouteNames),
  };
}

function setBackendWeights(
  id: string,
  live: RouteObject | undefined,
  weights: RouteWeights,
  managedRouteNames: readonly string[],
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const spec = live['spec'];
  if (!isRecord(spec))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec', 'missing or not an object');
  const rules = spec['rules'];
  if (!Array.isArray(rules))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.rules', 'missing or not a list');
  let canaryFound = false;
  let stableFound = false;
  const written: unknown[] = [];
  for (const [index, rule] of rules.entries()) {
    if (!isRecord(rule))
      return new RouteTranslationError(
        'traffic.route_malformed',
        id,
        `spec.rules[${index}]`,
        'not an object',
      );
    const backendRefs = rule['backendRefs'];
    const managed = typeof rule['name'] === 'string' && managedRouteNames.includes(rule['name']);
    if (managed || backendRefs === undefined) {
      written.push(rule);
      continue;
    }
    if (!Array.isArray(backendRefs))
      return new RouteTranslationError(
        'traffic.route_malformed',
        id,
        `spec.rules[${index}].backendRefs`,
        'not a list',
      );
    const refs = backendRefs.map((backendRef: unknown) => {
      if (!isRecord(backendRef)) return backendRef;
      if (backendRef['name'] === weights.canaryService) {
        canaryFound = true;
        return { ...backendRef, weight: weights.canary };
      }
      if (backendRef['name'] === weights.stableService) {
        stableFound = true;
        return { ...backendRef, weight: weights.total - weights.canary };
      }
      return backendRef;
    });
    written.push({ ...rule, backendRefs: refs });
  }
  for (const [found, role, service] of [
    [canaryFound, 'canaryService', weights.canaryService],
    [stableFound, 'stableService', weights.stableService],
  ] as const) {
    if (!found)
      return new RouteTranslationError(
        'traffic.backend_not_found',
        id,
        'spec.rules[].backendRefs',
        `no backendRef names the ${role} "${service}"`,
      );
  }
  return { ...live, spec: { ...spec, rules: written } };
}
