// APISIX: the weights of canaryService and stableService in an ApisixRoute's HTTP rules, and header routes as rules of their own.
import type { ApisixConfig } from '../manifest/traffic-routing.ts';
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

/** ApisixRoute of the APISIX Ingress Controller (`apisix.apache.org/v2`, the version Argo Rollouts uses). */
export const APISIX_ROUTE_RESOURCE = {
  group: 'apisix.apache.org',
  versions: ['v2'],
  plural: 'apisixroutes',
  kind: 'ApisixRoute',
} as const satisfies RouteResource;

const HTTP_FIELD = 'spec.http';

/** The weight APISIX's traffic-split gives a backend without one (the controller's default). */
const APISIX_DEFAULT_WEIGHT = 100;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The edit of the ApisixRoute named by `route.name`: in each HTTP rule named in `route.rules`, the
 * backend whose `serviceName` is canaryService gets the canary weight and the stableService's the rest
 * of maxTrafficWeight. A header route is a rule of its own in the same object (see
 * {@link setHeaderRules}). The object is the user's (never created); everything else stays as read.
 */
export function apisixRouteEdit(config: ApisixConfig, namespace: string): RouteEdit {
  const id = objectName('ApisixRoute', namespace, config.route);
  return {
    resource: APISIX_ROUTE_RESOURCE,
    namespace,
    name: config.route,
    translate: (live, weights) => weightedRules(id, config.rules, live, weights),
    readWeights: (live, services) => readRuleWeights(id, config.rules, live, services),
    setHeaderRoute: (live, route, services) => setHeaderRules(id, config.rules, live, route, services),
  };
}

/** The object's `spec.http` list, or the error naming what is wrong with it. */
function httpRules(id: string, live: RouteObject | undefined): unknown[] | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const spec = live['spec'];
  const http = isRecord(spec) ? spec['http'] : undefined;
  if (!Array.isArray(http))
    return new RouteTranslationError('traffic.route_malformed', id, HTTP_FIELD, 'missing or not a list');
  return http;
}

/** The index of the rule named `name` and its backends, or the error naming what is missing. */
function ruleBackends(
  id: string,
  http: unknown[],
  name: string,
): { index: number; rule: Record<string, unknown>; backends: unknown[] } | RouteTranslationError {
  const index = http.findIndex((rule) => isRecord(rule) && rule['name'] === name);
  if (index < 0)
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      `${HTTP_FIELD}[].name`,
      `no rule is named "${name}"`,
    );
  const rule = http[index] as Record<string, unknown>;
  const backends = rule['backends'];
  if (!Array.isArray(backends))
    return new RouteTranslationError(
      'traffic.route_malformed',
      id,
      `${HTTP_FIELD}[${index}].backends`,
      'missing or not a list',
    );
  return { index, rule, backends };
}

const isBackendOf = (backend: unknown, service: string): backend is Record<string, unknown> =>
  isRecord(backend) && backend['serviceName'] === service;

function weightedRules(
  id: string,
  names: readonly string[],
  live: RouteObject | undefined,
  weights: RouteWeights,
): RouteObject | RouteTranslationError {
  const http = httpRules(id, live);
  if (http instanceof RouteTranslationError) return http;
  const written = [...http];
  for (const name of names) {
    const found = ruleBackends(id, written, name);
    if (found instanceof RouteTranslationError) return found;
    const { index, rule, backends } = found;
    for (const [role, service] of [
      ['canaryService', weights.canaryService],
      ['stableService', weights.stableService],
    ] as const)
      if (!backends.some((backend) => isBackendOf(backend, service)))
        return new RouteTranslationError(
          'traffic.backend_not_found',
          id,
          `${HTTP_FIELD}[${index}].backends`,
          `no backend of rule "${name}" names the ${role} "${service}"`,
        );
    written[index] = {
      ...rule,
      backends: backends.map((backend) =>
        isBackendOf(backend, weights.canaryService)
          ? { ...backend, weight: weights.canary }
          : isBackendOf(backend, weights.stableService)
            ? { ...backend, weight: weights.total - weights.canary }
            : backend,
      ),
    };
  }
  const spec = live!['spec'] as Record<string, unknown>;
  return { ...live, spec: { ...spec, http: written } };
}

/** Each weighted rule's two backends' weights (an unset weight reads as APISIX's default). */
function readRuleWeights(
  id: string,
  names: readonly string[],
  live: RouteObject,
  services: RouteServices,
): RouteWeightsRead[] | RouteTranslationError {
  const http = httpRules(id, live);
  if (http instanceof RouteTranslationError) return http;
  const read: RouteWeightsRead[] = [];
  for (const name of names) {
    const found = ruleBackends(id, http, name);
    if (found instanceof RouteTranslationError) return found;
    const weightOf = (service: string): number | undefined => {
      const backend = found.backends.find((candidate) => isBackendOf(candidate, service));
      if (backend === undefined) return undefined;
      return typeof backend['weight'] === 'number' ? backend['weight'] : APISIX_DEFAULT_WEIGHT;
    };
    read.push({
      route: `rule ${name}`,
      canary: weightOf(services.canaryService),
      stable: weightOf(services.stableService),
    });
  }
  return read;
}

/** Argo's StringMatch as APISIX match expressions on a header (a prefix becomes an anchored regex). */
function headerExpressions(header: string, value: StringMatch): Array<Record<string, unknown>> {
  const subject = { scope: 'Header', name: header };
  const found: Array<Record<string, unknown>> = [];
  if (value.exact !== undefined) found.push({ subject, op: 'Equal', value: value.exact });
  if (value.regex !== undefined) found.push({ subject, op: 'RegexMatch', value: value.regex });
  if (value.prefix !== undefined) {
    const escaped = value.prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    found.push({ subject, op: 'RegexMatch', value: `^${escaped}.*` });
  }
  return found;
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
 * The header route, as Argo builds it for APISIX: per weighted rule, a copy named after the route
 * (`name`, then `name-1`, …) with one more `priority` than the rule, `match.exprs` the header
 * conditions (the rule's paths, hosts and methods kept), the stable backend dropped and the canary's at
 * weight 100. Argo puts these rules in an ApisixRoute of their own; here they are rules of the same
 * object (APISIX matches on priority, not on the object). An earlier call's rules are replaced; `match`
 * absent removes them.
 */
function setHeaderRules(
  id: string,
  names: readonly string[],
  live: RouteObject | undefined,
  route: HeaderRoute,
  services: RouteServices,
): RouteObject | RouteTranslationError {
  const http = httpRules(id, live);
  if (http instanceof RouteTranslationError) return http;
  if (names.includes(route.name))
    return new RouteTranslationError(
      'traffic.config_invalid',
      id,
      `${HTTP_FIELD}[].name`,
      `the header route "${route.name}" has the name of a weighted rule`,
    );
  const kept = http.filter((rule) => !isRuleOf(rule, route.name));
  const spec = live!['spec'] as Record<string, unknown>;
  if (route.match === undefined) return { ...live, spec: { ...spec, http: kept } };
  const exprs = route.match.flatMap((m) => headerExpressions(m.headerName, m.headerValue));
  const added: unknown[] = [];
  for (const [index, name] of names.entries()) {
    const found = ruleBackends(id, kept, name);
    if (found instanceof RouteTranslationError) return found;
    const { rule, backends } = found;
    if (!backends.some((backend) => isBackendOf(backend, services.canaryService)))
      return new RouteTranslationError(
        'traffic.backend_not_found',
        id,
        `${HTTP_FIELD}[].backends`,
        `no backend of rule "${name}" names the canaryService "${services.canaryService}"`,
      );
    const priority = typeof rule['priority'] === 'number' ? rule['priority'] : 0;
    const match = isRecord(rule['match']) ? rule['match'] : {};
    added.push({
      ...rule,
      name: index === 0 ? route.name : `${route.name}-${index}`,
      priority: priority + 1,
      match: { ...match, exprs },
      backends: backends
        .filter((backend) => !isBackendOf(backend, services.stableService))
        .map((backend) =>
          isBackendOf(backend, services.canaryService) ? { ...backend, weight: 100 } : backend,
        ),
    });
  }
  return { ...live, spec: { ...spec, http: [...kept, ...added] } };
}
