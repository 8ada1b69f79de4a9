// AWS Load Balancer Controller: the weighted forward action annotation `<prefix>/actions.<service>` on each listed Ingress, and header routes as conditions.
import type { AlbConfig } from '../manifest/alb-traffic-routing.ts';
import {
  stableShare,
  type HeaderRoute,
  type RouteEdit,
  type RouteObject,
  type RouteServices,
  type RouteWeights,
  type RouteWeightsRead,
  type StringMatch,
} from './route-edit.ts';
import { INGRESS_RESOURCE } from './nginx-ingress.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

/** The port name that tells the AWS Load Balancer Controller to take a path's action from the annotations. */
export const USE_ANNOTATION = 'use-annotation';

const PATHS_FIELD = 'spec.rules[].http.paths[].backend.service.name';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One target group of a forward action, in the field order Argo writes (so its annotation reads the same). */
interface TargetGroup {
  ServiceName: string;
  ServicePort: string;
  Weight: number;
}

/** A forward action as the controller reads it from `actions.<name>`. */
interface ForwardAction {
  Type: 'forward';
  ForwardConfig: {
    TargetGroups: TargetGroup[];
    TargetGroupStickinessConfig?: { Enabled: true; DurationSeconds: number };
  };
}

/** A condition of `conditions.<name>`: the request carries the header with one of the values. */
interface HeaderCondition {
  field: 'http-header';
  httpHeaderConfig: { httpHeaderName: string; values: string[] };
}

/** The Service whose action the weights are written to: rootService, else stableService (as Argo). */
export function albActionService(config: AlbConfig, stableService: string): string {
  return config.rootService ?? stableService;
}

/** `<prefix>/actions.<name>`. */
export function albActionKey(config: AlbConfig, name: string): string {
  return `${config.annotationPrefix}/actions.${name}`;
}

/** `<prefix>/conditions.<name>`. */
export function albConditionKey(config: AlbConfig, name: string): string {
  return `${config.annotationPrefix}/conditions.${name}`;
}

function forwardAction(config: AlbConfig, groups: Array<[string, number]>): ForwardAction {
  const port = String(config.servicePort);
  return {
    Type: 'forward',
    ForwardConfig: {
      TargetGroups: groups.map(([service, weight]) => ({
        ServiceName: service,
        ServicePort: port,
        Weight: weight,
      })),
      ...(config.stickiness !== undefined
        ? {
            TargetGroupStickinessConfig: {
              Enabled: true as const,
              DurationSeconds: config.stickiness.durationSeconds,
            },
          }
        : {}),
    },
  };
}

/**
 * The edit of one listed Ingress. The Ingress is the user's (never created); Rollgate writes one
 * annotation of it, the forward action of the action Service (rootService, else stableService): the
 * canary Service's target group at W and the stable Service's at maxTrafficWeight − W. Every other
 * annotation, the spec and the rest of metadata stay as read. Header routes add their own action and
 * conditions annotations and a path for them in each rule that routes to the action Service.
 */
export function albIngressEdit(
  config: AlbConfig,
  ingress: string,
  namespace: string,
  rollout: { name: string; managedRouteNames: readonly string[] },
): RouteEdit {
  const id = objectName('Ingress', namespace, ingress);
  return {
    resource: INGRESS_RESOURCE,
    namespace,
    name: ingress,
    translate: (live, weights) => weightedIngress({ config, id, namespace, rollout }, live, weights),
    readWeights: (live, services) => readAlbWeights(config, id, live, services),
    setHeaderRoute: (live, route, services) =>
      headerRouted({ config, id, namespace, rollout }, live, route, services),
  };
}

interface AlbContext {
  config: AlbConfig;
  id: string;
  namespace: string;
  rollout: { name: string; managedRouteNames: readonly string[] };
}

function annotationsOf(live: RouteObject): Record<string, unknown> {
  const metadata = live['metadata'];
  const annotations = isRecord(metadata) ? metadata['annotations'] : undefined;
  return isRecord(annotations) ? annotations : {};
}

function withAnnotations(live: RouteObject, annotations: Record<string, unknown>): RouteObject {
  const metadata = isRecord(live['metadata']) ? live['metadata'] : {};
  return { ...live, metadata: { ...metadata, annotations } };
}

/** The Ingress's rules (as read), or the error naming what is wrong with them. */
function rulesOf(id: string, live: RouteObject): unknown[] | RouteTranslationError {
  const spec = live['spec'];
  if (!isRecord(spec)) return new RouteTranslationError('traffic.route_malformed', id, 'spec', 'missing');
  const rules = spec['rules'] ?? [];
  if (!Array.isArray(rules))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.rules', 'not a list');
  return rules;
}

function pathsOf(rule: unknown): unknown[] {
  const http = isRecord(rule) ? rule['http'] : undefined;
  const paths = isRecord(http) ? http['paths'] : undefined;
  return Array.isArray(paths) ? paths : [];
}

function backendServiceOf(path: unknown): string | undefined {
  const backend = isRecord(path) ? path['backend'] : undefined;
  const service = isRecord(backend) ? backend['service'] : undefined;
  const name = isRecord(service) ? service['name'] : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** The rule indexes with a path sending to `service`; none is an error (the controller would not use the action). */
function rulesRoutingTo(id: string, live: RouteObject, service: string): number[] | RouteTranslationError {
  const rules = rulesOf(id, live);
  if (rules instanceof RouteTranslationError) return rules;
  const found = rules.flatMap((rule, index) =>
    pathsOf(rule).some((path) => backendServiceOf(path) === service) ? [index] : [],
  );
  if (found.length === 0)
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      PATHS_FIELD,
      `no path sends to the Service "${service}" (its port must be the name "${USE_ANNOTATION}")`,
    );
  return found;
}

/** The annotation value to write: the live one when it already says the same (whitespace aside), else `value`. */
function keepIfSame(live: unknown, value: unknown): string {
  if (typeof live === 'string') {
    try {
      if (JSON.stringify(JSON.parse(live)) === JSON.stringify(value)) return live;
    } catch {
      // Not JSON: replaced below.
    }
  }
  return JSON.stringify(value);
}

function weightedIngress(
  context: AlbContext,
  live: RouteObject | undefined,
  weights: RouteWeights,
): RouteObject | RouteTranslationError {
  const { config, id, namespace, rollout } = context;
  if (live === undefined)
    return new RouteTranslationError(
      'traffic.route_missing',
      id,
      'metadata.name',
      `not found (an ingress of Rollout ${namespace}/${rollout.name})`,
    );
  const service = albActionService(config, weights.stableService);
  const routed = rulesRoutingTo(id, live, service);
  if (routed instanceof RouteTranslationError) return routed;
  // As Argo orders the target groups: canary, each experiment template's Service, stable with what is left.
  const action = forwardAction(config, [
    [weights.canaryService, weights.canary],
    ...(weights.additional ?? []).map((d): [string, number] => [d.serviceName, d.weight]),
    [weights.stableService, stableShare(weights)],
  ]);
  const annotations = annotationsOf(live);
  const key = albActionKey(config, service);
  return withAnnotations(live, { ...annotations, [key]: keepIfSame(annotations[key], action) });
}

/**
 * What the controller would route, read from the action annotation: the canary and stable target
 * groups' weights as written. Their share of requests is each weight over the sum of the action's
 * weights (other target groups included); what the load balancer itself holds needs the AWS API.
 */
function readAlbWeights(
  config: AlbConfig,
  id: string,
  live: RouteObject,
  services: RouteServices,
): RouteWeightsRead[] | RouteTranslationError {
  const service = albActionService(config, services.stableService);
  const key = albActionKey(config, service);
  const field = `metadata.annotations.${key}`;
  const value = annotationsOf(live)[key];
  if (value === undefined)
    return new RouteTranslationError('traffic.route_malformed', id, field, 'missing: no action to route by');
  let parsed: unknown;
  try {
    parsed = typeof value === 'string' ? JSON.parse(value) : undefined;
  } catch {
    parsed = undefined;
  }
  const forward = isRecord(parsed) ? parsed['ForwardConfig'] : undefined;
  const groups = isRecord(forward) ? forward['TargetGroups'] : undefined;
  if (!isRecord(parsed) || parsed['Type'] !== 'forward' || !Array.isArray(groups))
    return new RouteTranslationError(
      'traffic.route_malformed',
      id,
      field,
      'not a forward action with ForwardConfig.TargetGroups (JSON)',
    );
  const weightOf = (name: string): number | undefined => {
    const group = groups.find((entry: unknown) => isRecord(entry) && entry['ServiceName'] === name);
    if (!isRecord(group)) return undefined;
    const weight = group['Weight'];
    return typeof weight === 'number' ? weight : undefined;
  };
  return [{ route: '', canary: weightOf(services.canaryService), stable: weightOf(services.stableService) }];
}

/** An ALB http-header condition value for a match: exact as is, a prefix as `prefix*` (ALB's wildcard). */
function conditionValue(match: StringMatch): string | undefined {
  if (match.exact !== undefined) return match.exact;
  if (match.prefix !== undefined) return `${match.prefix}*`;
  return undefined;
}

function headerConditions(
  id: string,
  route: HeaderRoute,
  match: NonNullable<HeaderRoute['match']>,
): HeaderCondition[] | RouteTranslationError {
  const conditions: HeaderCondition[] = [];
  for (const entry of match) {
    const value = conditionValue(entry.headerValue);
    if (value === undefined)
      return new RouteTranslationError(
        'traffic.config_invalid',
        id,
        `setHeaderRoute ${route.name}`,
        'an ALB header condition matches exact values or prefixes, not a regex',
      );
    // Two matches of one header are one condition with both values (ALB ors a condition's values).
    const same = conditions.find((c) => c.httpHeaderConfig.httpHeaderName === entry.headerName);
    if (same !== undefined) same.httpHeaderConfig.values.push(value);
    else
      conditions.push({
        field: 'http-header',
        httpHeaderConfig: { httpHeaderName: entry.headerName, values: [value] },
      });
  }
  return conditions;
}

/**
 * The Ingress with the header route `route.name` set (its action: 100 % to the canary Service; its
 * conditions: the headers; a `/*` path to it first in each rule that routes to the action Service) or,
 * `match` absent, removed (both annotations and its paths). Managed routes' paths are kept first, in
 * managedRoutes order, so the controller gives them the rule priority over the weighted path.
 */
function headerRouted(
  context: AlbContext,
  live: RouteObject | undefined,
  route: HeaderRoute,
  services: RouteServices,
): RouteObject | RouteTranslationError {
  const { config, id, rollout } = context;
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const rules = rulesOf(id, live);
  if (rules instanceof RouteTranslationError) return rules;
  const annotations = { ...annotationsOf(live) };
  const actionKey = albActionKey(config, route.name);
  const conditionKey = albConditionKey(config, route.name);
  const spec = live['spec'] as Record<string, unknown>;
  if (route.match === undefined) {
    delete annotations[actionKey];
    delete annotations[conditionKey];
    const written = rules.map((rule) => {
      if (!pathsOf(rule).some((path) => backendServiceOf(path) === route.name)) return rule;
      const r = rule as Record<string, unknown>;
      const http = r['http'] as Record<string, unknown>;
      return {
        ...r,
        http: { ...http, paths: pathsOf(rule).filter((p) => backendServiceOf(p) !== route.name) },
      };
    });
    return { ...withAnnotations(live, annotations), spec: { ...spec, rules: written } };
  }
  const conditions = headerConditions(id, route, route.match);
  if (conditions instanceof RouteTranslationError) return conditions;
  const routed = rulesRoutingTo(id, live, albActionService(config, services.stableService));
  if (routed instanceof RouteTranslationError) return routed;
  annotations[actionKey] = keepIfSame(
    annotations[actionKey],
    forwardAction(config, [[services.canaryService, 100]]),
  );
  annotations[conditionKey] = keepIfSame(annotations[conditionKey], conditions);
  const order = (path: unknown): number => {
    const index = rollout.managedRouteNames.indexOf(backendServiceOf(path) ?? '');
    return index === -1 ? rollout.managedRouteNames.length : index;
  };
  const written = rules.map((rule, index) => {
    if (!routed.includes(index)) return rule;
    const paths = pathsOf(rule);
    const withRoute = paths.some((path) => backendServiceOf(path) === route.name)
      ? paths
      : [
          {
            path: '/*',
            pathType: 'ImplementationSpecific',
            backend: { service: { name: route.name, port: { name: USE_ANNOTATION } } },
          },
          ...paths,
        ];
    // A stable sort: managed routes first in managedRoutes order, every other path in its place after.
    const sorted = withRoute
      .map((path, position) => ({ path, position }))
      .sort((a, b) => order(a.path) - order(b.path) || a.position - b.position)
      .map(({ path }) => path);
    const r = rule as Record<string, unknown>;
    return { ...r, http: { ...(r['http'] as Record<string, unknown>), paths: sorted } };
  });
  return { ...withAnnotations(live, annotations), spec: { ...spec, rules: written } };
}
