// Contour: the weights of canaryService and stableService in the routes of an HTTPProxy (projectcontour.io).
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

/** HTTPProxy serves projectcontour.io/v1 only (what the Contour plugin uses too). */
export const HTTP_PROXY_RESOURCE = {
  group: 'projectcontour.io',
  versions: ['v1'],
  plural: 'httpproxies',
  kind: 'HTTPProxy',
} as const satisfies RouteResource;

const ROUTES_FIELD = 'spec.routes';

/**
 * The HTTPProxy annotation recording the header routes Rollgate added: route name → the header
 * conditions it requires. HTTPProxy routes have no names, so this is how a later step (or the weight
 * split) tells Rollgate's routes from the user's.
 */
export const CONTOUR_HEADER_ROUTES_ANNOTATION = 'rollgate.dev/header-routes';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A service entry that takes part in the split (a `mirror: true` entry only receives copies). */
function isWeighted(entry: unknown): entry is Record<string, unknown> {
  return isRecord(entry) && entry['mirror'] !== true;
}

function servicesOf(route: unknown): unknown[] {
  return isRecord(route) && Array.isArray(route['services']) ? route['services'] : [];
}

const names = (entry: unknown, service: string): boolean => isWeighted(entry) && entry['name'] === service;

/** JSON with object keys sorted, so a value read back from the API server compares with the one written. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isRecord(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${sortedJson(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The header routes recorded on the object (name → header conditions); an unreadable record is none. */
function recordedHeaderRoutes(live: RouteObject): Record<string, unknown[]> {
  const metadata = isRecord(live['metadata']) ? live['metadata'] : {};
  const annotations = isRecord(metadata['annotations']) ? metadata['annotations'] : {};
  const text = annotations[CONTOUR_HEADER_ROUTES_ANNOTATION];
  if (typeof text !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, unknown[]] => Array.isArray(entry[1])),
    );
  } catch {
    return {};
  }
}

const headerConditionsOf = (route: unknown): unknown[] =>
  isRecord(route) && Array.isArray(route['conditions'])
    ? route['conditions'].filter((condition) => isRecord(condition) && condition['header'] !== undefined)
    : [];

/**
 * Whether `route` is a header route Rollgate added: it sends only to canaryService and its header
 * conditions are those recorded under one name.
 */
function isHeaderRoute(route: unknown, recorded: Record<string, unknown[]>, canaryService: string): boolean {
  const services = servicesOf(route);
  if (services.length === 0 || !services.every((entry) => isRecord(entry) && entry['name'] === canaryService))
    return false;
  const own = sortedJson(headerConditionsOf(route));
  return Object.values(recorded).some((conditions) => sortedJson(conditions) === own);
}

/** Whether Rollgate splits this route: it sends to canaryService (as the plugin picks its routes) and is not a header route. */
function isSplit(route: unknown, canaryService: string, recorded: Record<string, unknown[]>): boolean {
  return (
    servicesOf(route).some((entry) => names(entry, canaryService)) &&
    !isHeaderRoute(route, recorded, canaryService)
  );
}

/**
 * The edit of one HTTPProxy. In every route with a service named canaryService, the canary and stable
 * entries share what the route's other (non-mirror) services leave of maxTrafficWeight: the canary
 * `⌊left × W / total⌋`, the stable the rest, as the plugin splits them (with no other service: W and
 * total − W). Other routes, other services, mirrors and every other field stay as read. The object is
 * the user's, never created.
 */
export function httpProxyEdit(name: string, namespace: string): RouteEdit {
  const id = objectName('HTTPProxy', namespace, name);
  return {
    resource: HTTP_PROXY_RESOURCE,
    namespace,
    name,
    translate: (live, weights) => splitRoutes(id, live, weights),
    readWeights: (live, services) => readProxyWeights(id, live, services),
    setHeaderRoute: (live, route, services) => setHeaderRoutes(id, live, route, services),
  };
}

function routesOf(id: string, live: RouteObject): unknown[] | RouteTranslationError {
  const spec = live['spec'];
  const routes = isRecord(spec) ? spec['routes'] : undefined;
  if (!Array.isArray(routes))
    return new RouteTranslationError(
      'traffic.route_malformed',
      id,
      ROUTES_FIELD,
      'missing or not a list (the HTTPProxy must route to the Services itself, not only include others)',
    );
  return routes;
}

/** The sum of the weights of the route's services other than the two (unset: 0, as Contour reads it then). */
function otherWeight(services: unknown[], split: RouteServices): number {
  return services
    .filter(isWeighted)
    .filter((entry) => entry['name'] !== split.canaryService && entry['name'] !== split.stableService)
    .reduce<number>((sum, entry) => sum + (typeof entry['weight'] === 'number' ? entry['weight'] : 0), 0);
}

function splitRoutes(
  id: string,
  live: RouteObject | undefined,
  weights: RouteWeights,
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const routes = routesOf(id, live);
  if (routes instanceof RouteTranslationError) return routes;
  const recorded = recordedHeaderRoutes(live);
  if (!routes.some((route) => isSplit(route, weights.canaryService, recorded)))
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      `${ROUTES_FIELD}[].services`,
      `no route sends to the canaryService "${weights.canaryService}"`,
    );
  const written: unknown[] = [];
  for (const [index, route] of routes.entries()) {
    if (!isSplit(route, weights.canaryService, recorded)) {
      written.push(route);
      continue;
    }
    const services = servicesOf(route);
    const at = `${ROUTES_FIELD}[${index}].services`;
    if (!services.some((entry) => names(entry, weights.stableService)))
      return new RouteTranslationError(
        'traffic.backend_not_found',
        id,
        at,
        `no service names the stableService "${weights.stableService}" beside the canaryService "${weights.canaryService}"`,
      );
    const others = otherWeight(services, weights);
    if (others > weights.total)
      return new RouteTranslationError(
        'traffic.route_malformed',
        id,
        at,
        `the other services' weights (${others}) exceed the ${weights.total} to share`,
      );
    const left = weights.total - others;
    const canary = Math.floor((left * weights.canary) / weights.total);
    const weightOf = (entry: unknown): number | undefined =>
      names(entry, weights.canaryService)
        ? canary
        : names(entry, weights.stableService)
          ? left - canary
          : undefined;
    written.push({
      ...(route as Record<string, unknown>),
      services: services.map((entry) => {
        const weight = weightOf(entry);
        return weight === undefined ? entry : { ...(entry as Record<string, unknown>), weight };
      }),
    });
  }
  const spec = live['spec'] as Record<string, unknown>;
  return { ...live, spec: { ...spec, routes: written } };
}

/**
 * The weight Contour gives the entry named `service` in a route: its `weight`; unset, 0 when another
 * service of the route has one, else an even share of 100 (Contour's split without weights).
 */
function weightIn(services: unknown[], service: string): number | undefined {
  const weighted = services.filter(isWeighted);
  const entry = weighted.find((candidate) => candidate['name'] === service);
  if (entry === undefined) return undefined;
  if (typeof entry['weight'] === 'number') return entry['weight'];
  return weighted.some((other) => typeof other['weight'] === 'number')
    ? 0
    : Math.floor(100 / weighted.length);
}

/** The two services' weights in each route that sends to the canary, named `route <index>`. */
function readProxyWeights(
  id: string,
  live: RouteObject,
  services: RouteServices,
): RouteWeightsRead[] | RouteTranslationError {
  const routes = routesOf(id, live);
  if (routes instanceof RouteTranslationError) return routes;
  const recorded = recordedHeaderRoutes(live);
  return routes.flatMap((route, index) =>
    isSplit(route, services.canaryService, recorded)
      ? [
          {
            route: `route ${index}`,
            canary: weightIn(servicesOf(route), services.canaryService),
            stable: weightIn(servicesOf(route), services.stableService),
          },
        ]
      : [],
  );
}

/** Argo's StringMatch as a Contour header condition (a prefix becomes an anchored regular expression). */
function headerCondition(name: string, value: StringMatch): Record<string, unknown> {
  if (value.exact !== undefined) return { header: { name, exact: value.exact } };
  if (value.regex !== undefined) return { header: { name, regex: value.regex } };
  const prefix = (value.prefix ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { header: { name, regex: `^${prefix}.*` } };
}

/**
 * The header route on an HTTPProxy: for each route Rollgate splits, a copy of it (its conditions and
 * policies) that also requires the headers and sends only to the canary Service (on the canary entry's
 * port), placed before it. Contour matches a route with more header conditions before one with fewer
 * on the same path, so the requests carrying the headers go to the canary. The routes of an earlier
 * call with the same name are replaced; `match` absent removes them. The annotation
 * {@link CONTOUR_HEADER_ROUTES_ANNOTATION} records which routes are Rollgate's.
 */
function setHeaderRoutes(
  id: string,
  live: RouteObject | undefined,
  route: HeaderRoute,
  services: RouteServices,
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const routes = routesOf(id, live);
  if (routes instanceof RouteTranslationError) return routes;
  const recorded = recordedHeaderRoutes(live);
  const previous = recorded[route.name];
  const own = { [route.name]: previous ?? [] };
  const kept = routes.filter(
    (candidate) => previous === undefined || !isHeaderRoute(candidate, own, services.canaryService),
  );
  const { [route.name]: _replaced, ...others } = recorded;
  const conditions = (route.match ?? []).map((m) => headerCondition(m.headerName, m.headerValue));
  const written: unknown[] = [];
  if (route.match !== undefined) {
    const sources = kept.filter((candidate) => isSplit(candidate, services.canaryService, others));
    if (sources.length === 0)
      return new RouteTranslationError(
        'traffic.backend_not_found',
        id,
        `${ROUTES_FIELD}[].services`,
        `no route sends to the canaryService "${services.canaryService}" to add the header route "${route.name}" to`,
      );
    for (const candidate of kept) {
      if (sources.includes(candidate)) {
        const source = candidate as Record<string, unknown>;
        const canary = servicesOf(source).find((entry) => names(entry, services.canaryService)) as Record<
          string,
          unknown
        >;
        const ownConditions = Array.isArray(source['conditions']) ? source['conditions'] : [];
        written.push({
          ...source,
          conditions: [...ownConditions, ...conditions],
          services: [{ name: services.canaryService, port: canary['port'] }],
        });
      }
      written.push(candidate);
    }
  } else written.push(...kept);
  const record = route.match === undefined ? others : { ...others, [route.name]: conditions };
  const metadata = isRecord(live['metadata']) ? live['metadata'] : {};
  const { [CONTOUR_HEADER_ROUTES_ANNOTATION]: _old, ...annotations } = isRecord(metadata['annotations'])
    ? metadata['annotations']
    : {};
  if (Object.keys(record).length > 0) annotations[CONTOUR_HEADER_ROUTES_ANNOTATION] = JSON.stringify(record);
  const spec = live['spec'] as Record<string, unknown>;
  const { annotations: _annotations, ...rest } = metadata;
  return {
    ...live,
    metadata: { ...rest, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    spec: { ...spec, routes: written },
  };
}
