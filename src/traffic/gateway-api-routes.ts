// Gateway API: the canary and stable weights on the backendRefs of an HTTPRoute, GRPCRoute or TCPRoute.
import type { GatewayRouteKind, GatewayRouteRef } from '../manifest/traffic-routing.ts';
import type {
  HeaderRoute,
  RouteEdit,
  RouteObject,
  RouteResource,
  RouteServices,
  RouteWeights,
  RouteWeightsRead,
  StringMatch,
} from './route-edit.ts';
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
    readWeights: (live, services) => readBackendWeights(id, live, services, managedRouteNames),
    ...(ref.kind === 'HTTPRoute'
      ? {
          setHeaderRoute: (live: RouteObject | undefined, route: HeaderRoute, services: RouteServices) =>
            ref.useHeaderRoutes
              ? setHeaderRule(id, live, route, services, managedRouteNames)
              : (live ??
                new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found')),
        }
      : {}),
  };
}

/** Argo's StringMatch as a Gateway API header match (a prefix becomes an anchored regular expression). */
function headerMatch(name: string, value: StringMatch): Record<string, unknown> {
  if (value.exact !== undefined) return { type: 'Exact', name, value: value.exact };
  if (value.regex !== undefined) return { type: 'RegularExpression', name, value: value.regex };
  const prefix = (value.prefix ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { type: 'RegularExpression', name, value: `^${prefix}.*` };
}

/** A rule named `name`, or `name-<n>` (one per weighted rule), is the header route `name`. */
function isRuleOf(rule: unknown, name: string): boolean {
  if (!isRecord(rule) || typeof rule['name'] !== 'string') return false;
  const ruleName = rule['name'];
  return (
    ruleName === name || (ruleName.startsWith(`${name}-`) && /^\d+$/.test(ruleName.slice(name.length + 1)))
  );
}

/**
 * The header route on an HTTPRoute, as the plugin builds it: for each rule that weights the two
 * Services, one rule named after the route (`name`, then `name-1`, …) with the rule's matches and
 * filters, every match also requiring the headers, and the canary Service as its only backend. The
 * rules of an earlier call with the same name are replaced; `match` absent removes them.
 */
function setHeaderRule(
  id: string,
  live: RouteObject | undefined,
  route: HeaderRoute,
  services: RouteServices,
  managedRouteNames: readonly string[],
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const spec = live['spec'];
  if (!isRecord(spec) || !Array.isArray(spec['rules']))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.rules', 'missing or not a list');
  const kept = spec['rules'].filter((rule: unknown) => !isRuleOf(rule, route.name));
  if (route.match === undefined) return { ...live, spec: { ...spec, rules: kept } };
  const headers = route.match.map((m) => headerMatch(m.headerName, m.headerValue));
  const refsOf = (rule: unknown): Array<Record<string, unknown>> =>
    isRecord(rule) && Array.isArray(rule['backendRefs']) ? rule['backendRefs'].filter(isRecord) : [];
  const sources = kept.filter((rule: unknown) => {
    if (isRecord(rule) && typeof rule['name'] === 'string' && managedRouteNames.includes(rule['name']))
      return false;
    const names = refsOf(rule).map((ref) => ref['name']);
    return names.includes(services.canaryService) && names.includes(services.stableService);
  });
  if (sources.length === 0)
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      'spec.rules[].backendRefs',
      `no rule weights "${services.canaryService}" and "${services.stableService}" to add the header route "${route.name}" to`,
    );
  const added = sources.map((rule, index) => {
    const source = rule as Record<string, unknown>;
    const canaryRef = refsOf(source).find((ref) => ref['name'] === services.canaryService)!;
    const matches =
      Array.isArray(source['matches']) && source['matches'].length > 0 ? source['matches'] : [{}];
    return {
      name: index === 0 ? route.name : `${route.name}-${index}`,
      matches: matches.map((m: unknown) => {
        const match = isRecord(m) ? m : {};
        const own = Array.isArray(match['headers']) ? match['headers'] : [];
        return { ...match, headers: [...own, ...headers] };
      }),
      ...(Array.isArray(source['filters']) ? { filters: source['filters'] } : {}),
      backendRefs: [
        {
          group: '',
          kind: 'Service',
          name: services.canaryService,
          ...(canaryRef['port'] !== undefined ? { port: canaryRef['port'] } : {}),
        },
      ],
    };
  });
  return { ...live, spec: { ...spec, rules: [...kept, ...added] } };
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
    // Header rules (`name`, `name-1`, …) carry only the canary: they are not part of the split.
    const managed = managedRouteNames.some((name) => isRuleOf(rule, name));
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

/** A backendRef's weight as the Gateway API reads it: unset means 1. */
function refWeight(ref: Record<string, unknown>): number {
  return typeof ref['weight'] === 'number' ? ref['weight'] : 1;
}

/**
 * The weights of the rules {@link setBackendWeights} writes (every rule with a backendRef of either
 * Service, but the managed ones), one entry per rule, named by the rule's name or its index.
 */
function readBackendWeights(
  id: string,
  live: RouteObject,
  services: RouteServices,
  managedRouteNames: readonly string[],
): RouteWeightsRead[] | RouteTranslationError {
  const spec = live['spec'];
  const rules = isRecord(spec) ? spec['rules'] : undefined;
  if (!Array.isArray(rules))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.rules', 'missing or not a list');
  return rules.flatMap((rule: unknown, index): RouteWeightsRead[] => {
    if (!isRecord(rule) || !Array.isArray(rule['backendRefs'])) return [];
    if (managedRouteNames.some((name) => isRuleOf(rule, name))) return [];
    const refs = rule['backendRefs'].filter(isRecord);
    const canary = refs.find((ref) => ref['name'] === services.canaryService);
    const stable = refs.find((ref) => ref['name'] === services.stableService);
    if (canary === undefined && stable === undefined) return [];
    return [
      {
        route: typeof rule['name'] === 'string' ? `rule ${rule['name']}` : `rule ${index}`,
        canary: canary === undefined ? undefined : refWeight(canary),
        stable: stable === undefined ? undefined : refWeight(stable),
      },
    ];
  });
}
