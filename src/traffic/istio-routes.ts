// Istio: the canary and stable weights on a VirtualService's routes, and DestinationRule subsets pinned to the pod hashes.
import type { IstioConfig, IstioVirtualServiceRef } from '../manifest/traffic-routing.ts';
import {
  stableShare,
  type HeaderRoute,
  type MirrorRoute,
  type RouteEdit,
  type RouteObject,
  type RouteResource,
  type RouteServices,
  type RouteWeights,
  type RouteWeightsRead,
  type StringMatch,
} from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

const GROUP = 'networking.istio.io';

/** The Istio kinds Rollgate edits, with the API versions tried in order. */
export const ISTIO_RESOURCES = {
  VirtualService: {
    group: GROUP,
    versions: ['v1', 'v1beta1', 'v1alpha3'],
    plural: 'virtualservices',
    kind: 'VirtualService',
  },
  DestinationRule: {
    group: GROUP,
    versions: ['v1', 'v1beta1', 'v1alpha3'],
    plural: 'destinationrules',
    kind: 'DestinationRule',
  },
} as const satisfies Record<string, RouteResource>;

/** The pod label a subset is pinned to. */
const HASH_LABEL = 'rollouts-pod-template-hash';

type Subsets = IstioConfig['destinationRule'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A destination's Service, as Argo reads `host`: the part before the first dot (`web.shop.svc` → `web`). */
function serviceOf(destination: unknown): string {
  const host =
    isRecord(destination) && isRecord(destination['destination']) ? destination['destination']['host'] : '';
  return typeof host === 'string' ? (host.split('.')[0] ?? '') : '';
}

function subsetOf(destination: unknown): string {
  const subset =
    isRecord(destination) && isRecord(destination['destination']) ? destination['destination']['subset'] : '';
  return typeof subset === 'string' ? subset : '';
}

/** Whether a destination is the canary's or the stable's: by its host's Service, or by its subset. */
function roleOf(
  destination: unknown,
  services: RouteServices,
  subsets: Subsets,
): 'canary' | 'stable' | undefined {
  if (
    (services.canaryService !== '' && serviceOf(destination) === services.canaryService) ||
    (subsets !== undefined && subsetOf(destination) === subsets.canarySubsetName)
  )
    return 'canary';
  if (
    (services.stableService !== '' && serviceOf(destination) === services.stableService) ||
    (subsets !== undefined && subsetOf(destination) === subsets.stableSubsetName)
  )
    return 'stable';
  return undefined;
}

/**
 * One weighted route's canary and stable weights as read. Istio leaves the weight of a lone
 * destination unset (it gets all traffic, 100) and reads any other unset weight as 0.
 */
function readRoute(
  route: unknown,
  kind: 'http' | 'tls' | 'tcp',
  index: number,
  services: RouteServices,
  subsets: Subsets,
): RouteWeightsRead {
  const destinations: unknown[] = isRecord(route) && Array.isArray(route['route']) ? route['route'] : [];
  const weightOf = (role: 'canary' | 'stable'): number | undefined => {
    const found = destinations.find((d) => roleOf(d, services, subsets) === role);
    if (!isRecord(found)) return undefined;
    if (typeof found['weight'] === 'number') return found['weight'];
    return destinations.length === 1 ? 100 : 0;
  };
  const name = isRecord(route) && typeof route['name'] === 'string' ? route['name'] : undefined;
  return {
    route: kind === 'http' && name !== undefined ? `route ${name}` : `${kind}[${index}]`,
    canary: weightOf('canary'),
    stable: weightOf('stable'),
  };
}

type Fail = (
  field: string,
  detail: string,
  code?: 'traffic.route_missing' | 'traffic.route_malformed' | 'traffic.backend_not_found',
) => RouteTranslationError;

/**
 * One route's destinations with the weights: canary (its Service, or its subset) gets `canary`, each
 * experiment template's Service its weight, stable what is left ({@link stableShare}). A template's
 * destination already there (host = its Service) is kept in place with its weight; the missing ones are
 * added at the end, by Service name, as `{destination: {host: <service>}}`, as Argo adds them. Any other
 * destination is dropped, as Argo does, so the weights still add up to the total Istio requires (and a
 * template's destination goes once it is no longer asked for). Canary and stable must be present: a half
 * split is refused.
 */
function weighRoute(
  route: unknown,
  at: string,
  weights: RouteWeights,
  subsets: Subsets,
  fail: Fail,
): unknown[] | RouteTranslationError {
  const destinations = isRecord(route) ? route['route'] : undefined;
  if (!Array.isArray(destinations)) return fail(`${at}.route`, 'missing or not a list');
  const isCanary = (d: unknown) => roleOf(d, weights, subsets) === 'canary';
  const isStable = (d: unknown) => roleOf(d, weights, subsets) === 'stable';
  const canaryName = subsets
    ? `canary subset "${subsets.canarySubsetName}"`
    : `canaryService "${weights.canaryService}"`;
  const stableName = subsets
    ? `stable subset "${subsets.stableSubsetName}"`
    : `stableService "${weights.stableService}"`;
  if (!destinations.some(isCanary))
    return fail(`${at}.route`, `no destination for the ${canaryName}`, 'traffic.backend_not_found');
  if (!destinations.some(isStable))
    return fail(`${at}.route`, `no destination for the ${stableName}`, 'traffic.backend_not_found');
  const additional = weights.additional ?? [];
  const destinationOf = (d: unknown) =>
    additional.find((destination) => destination.serviceName === serviceOf(d));
  const weighted = destinations.flatMap((d: unknown) => {
    if (isCanary(d)) return [{ ...(d as Record<string, unknown>), weight: weights.canary }];
    if (isStable(d)) return [{ ...(d as Record<string, unknown>), weight: stableShare(weights) }];
    const destination = destinationOf(d);
    if (destination !== undefined) return [{ ...(d as Record<string, unknown>), weight: destination.weight }];
    return [];
  });
  const missing = additional
    .filter((destination) => !destinations.some((d: unknown) => serviceOf(d) === destination.serviceName))
    .sort((a, b) => (a.serviceName < b.serviceName ? -1 : a.serviceName > b.serviceName ? 1 : 0));
  return [
    ...weighted,
    ...missing.map((destination) => ({
      destination: { host: destination.serviceName },
      weight: destination.weight,
    })),
  ];
}

/** The indexes of the routes of one kind (`http`, `tls`, `tcp`) that carry the split. */
function pick(
  routes: unknown[],
  kind: 'http' | 'tls' | 'tcp',
  ref: IstioVirtualServiceRef,
  managedRouteNames: readonly string[],
  fail: Fail,
): number[] | RouteTranslationError {
  const ports = (route: unknown): Set<number> => {
    const matches = isRecord(route) && Array.isArray(route['match']) ? route['match'] : [];
    return new Set(
      matches.flatMap((m: unknown) => (isRecord(m) && typeof m['port'] === 'number' ? [m['port']] : [])),
    );
  };
  const only = (candidates: number[], field: string): number[] | RouteTranslationError => {
    if (candidates.length <= 1) return candidates;
    return fail(`spec.${kind}`, `has ${candidates.length} routes: name the one to weight in ${field}`);
  };
  if (kind === 'http') {
    if (ref.routes.length === 0) {
      const unmanaged = routes.flatMap((route, index) =>
        isRecord(route) && typeof route['name'] === 'string' && managedRouteNames.includes(route['name'])
          ? []
          : [index],
      );
      return only(unmanaged, 'virtualService.routes');
    }
    const found: number[] = [];
    for (const name of ref.routes) {
      const index = routes.findIndex((route) => isRecord(route) && route['name'] === name);
      if (index < 0)
        return fail('spec.http[].name', `no HTTP route named "${name}"`, 'traffic.backend_not_found');
      found.push(index);
    }
    return found;
  }
  const wanted = kind === 'tls' ? ref.tlsRoutes : ref.tcpRoutes;
  if (wanted.length === 0)
    return only(
      routes.map((_route, index) => index),
      `virtualService.${kind}Routes`,
    );
  const found: number[] = [];
  for (const want of wanted) {
    const matching = routes.flatMap((route, index) => {
      const routePorts = ports(route);
      if (routePorts.size > 1) return [];
      const port = [...routePorts][0];
      if ((want.port ?? undefined) !== port) return [];
      if (kind === 'tls') {
        const matches = isRecord(route) && Array.isArray(route['match']) ? route['match'] : [];
        const hosts = new Set(
          matches.flatMap((m: unknown) =>
            isRecord(m) && Array.isArray(m['sniHosts']) ? (m['sniHosts'] as unknown[]) : [],
          ),
        );
        const sni = 'sniHosts' in want ? (want as { sniHosts: string[] }).sniHosts : [];
        if (hosts.size !== sni.length || !sni.every((host) => hosts.has(host))) return [];
      }
      return [index];
    });
    if (matching.length === 0)
      return fail(
        `spec.${kind}[].match`,
        `no ${kind.toUpperCase()} route matches port ${want.port ?? '(none)'}`,
        'traffic.backend_not_found',
      );
    found.push(...matching);
  }
  return found;
}

/**
 * The edit of one VirtualService: the weights on the routes the configuration names (HTTP routes by
 * name, or the only one; TLS routes by port and SNI hosts; TCP routes by port; or the only one of
 * each). Every other route, and every other field of the routes edited, is kept as read.
 */
export function virtualServiceEdit(
  ref: IstioVirtualServiceRef,
  namespace: string,
  subsets: Subsets,
  managedRouteNames: readonly string[],
): RouteEdit {
  const id = objectName('VirtualService', namespace, ref.name);
  const fail: Fail = (field, detail, code = 'traffic.route_malformed') =>
    new RouteTranslationError(code, id, field, detail);
  return {
    resource: ISTIO_RESOURCES.VirtualService,
    namespace,
    name: ref.name,
    translate: (live, weights) => {
      if (live === undefined) return fail('metadata.name', 'not found', 'traffic.route_missing');
      const spec = live['spec'];
      if (!isRecord(spec)) return fail('spec', 'missing or not an object');
      const written: Record<string, unknown> = { ...spec };
      let edited = 0;
      for (const kind of ['http', 'tls', 'tcp'] as const) {
        const routes = spec[kind];
        if (routes === undefined) continue;
        if (!Array.isArray(routes)) return fail(`spec.${kind}`, 'not a list');
        const picked = pick(routes, kind, ref, managedRouteNames, fail);
        if (picked instanceof RouteTranslationError) return picked;
        // A mirror route copies the primary route's destinations: its weights follow the split too (as Argo).
        const mirrors =
          kind === 'http'
            ? routes.flatMap((route, index) =>
                isRecord(route) &&
                route['mirror'] !== undefined &&
                typeof route['name'] === 'string' &&
                managedRouteNames.includes(route['name']) &&
                !picked.includes(index)
                  ? [index]
                  : [],
              )
            : [];
        const indexes = [...picked, ...mirrors];
        const next = [...routes];
        for (const index of indexes) {
          const weighed = weighRoute(routes[index], `spec.${kind}[${index}]`, weights, subsets, fail);
          if (weighed instanceof RouteTranslationError) return weighed;
          next[index] = { ...(routes[index] as Record<string, unknown>), route: weighed };
          edited += 1;
        }
        written[kind] = next;
      }
      if (ref.routes.length > 0 && !Array.isArray(spec['http']))
        return fail(
          'spec.http',
          'missing: virtualService.routes names HTTP routes',
          'traffic.backend_not_found',
        );
      if (edited === 0)
        return fail('spec', 'has no http, tls or tcp route to weight', 'traffic.backend_not_found');
      return { ...live, spec: written };
    },
    // The routes translate weights (mirror routes copy the primary's destinations: not read twice).
    readWeights: (live, services) => {
      const spec = live['spec'];
      if (!isRecord(spec)) return fail('spec', 'missing or not an object');
      const read: RouteWeightsRead[] = [];
      for (const kind of ['http', 'tls', 'tcp'] as const) {
        const routes = spec[kind];
        if (routes === undefined) continue;
        if (!Array.isArray(routes)) return fail(`spec.${kind}`, 'not a list');
        const picked = pick(routes, kind, ref, managedRouteNames, fail);
        if (picked instanceof RouteTranslationError) return picked;
        for (const index of picked) read.push(readRoute(routes[index], kind, index, services, subsets));
      }
      return read;
    },
    setHeaderRoute: (live: RouteObject | undefined, route: HeaderRoute, services: RouteServices) =>
      setManagedRoute(
        live,
        route.name,
        route.match === undefined,
        { fail, ref, subsets, services, managedRouteNames },
        (_primary, canary) => ({
          name: route.name,
          match: [
            {
              headers: Object.fromEntries(
                (route.match ?? []).map((m) => [m.headerName, stringMatch(m.headerValue)]),
              ),
            },
          ],
          route: [{ ...canary, weight: 100 }],
        }),
      ),
    setMirrorRoute: (live: RouteObject | undefined, route: MirrorRoute, services: RouteServices) =>
      setManagedRoute(
        live,
        route.name,
        route.match === undefined,
        { fail, ref, subsets, services, managedRouteNames },
        (primary, canary) => ({
          name: route.name,
          match: (route.match ?? []).map((m) => ({
            ...(m.method ? { method: stringMatch(m.method) } : {}),
            ...(m.path ? { uri: stringMatch(m.path) } : {}),
            ...(m.headers
              ? {
                  headers: Object.fromEntries(Object.entries(m.headers).map(([h, v]) => [h, stringMatch(v)])),
                }
              : {}),
          })),
          route: primary,
          mirror: canary['destination'],
          mirrorPercentage: { value: route.percentage ?? 100 },
        }),
      ),
  };
}

/** Argo's StringMatch as Istio's (exactly one of exact, prefix, regex). */
function stringMatch(value: StringMatch): Record<string, string> {
  if (value.exact !== undefined) return { exact: value.exact };
  if (value.prefix !== undefined) return { prefix: value.prefix };
  return { regex: value.regex ?? '' };
}

interface ManagedRouteContext {
  fail: Fail;
  ref: IstioVirtualServiceRef;
  subsets: Subsets;
  services: RouteServices;
  managedRouteNames: readonly string[];
}

/**
 * Adds, replaces or (remove) deletes the managed HTTP route `name`, built from the primary route's
 * destinations and its canary destination, then orders the managed routes first, in managedRoutes
 * order, above every other route (Istio takes the first route that matches).
 */
function setManagedRoute(
  live: RouteObject | undefined,
  name: string,
  remove: boolean,
  { fail, ref, subsets, services, managedRouteNames }: ManagedRouteContext,
  build: (primary: unknown[], canary: Record<string, unknown>) => Record<string, unknown>,
): RouteObject | RouteTranslationError {
  if (live === undefined) return fail('metadata.name', 'not found', 'traffic.route_missing');
  const spec = live['spec'];
  if (!isRecord(spec) || !Array.isArray(spec['http'])) return fail('spec.http', 'missing or not a list');
  const others = spec['http'].filter((route: unknown) => !(isRecord(route) && route['name'] === name));
  let routes: unknown[] = others;
  if (!remove) {
    const picked = pick(others, 'http', ref, managedRouteNames, fail);
    if (picked instanceof RouteTranslationError) return picked;
    const primary = picked[0] === undefined ? undefined : others[picked[0]];
    const destinations: unknown[] =
      isRecord(primary) && Array.isArray(primary['route']) ? primary['route'] : [];
    const canary = destinations.find(
      (d) =>
        (services.canaryService !== '' && serviceOf(d) === services.canaryService) ||
        (subsets !== undefined && subsetOf(d) === subsets.canarySubsetName),
    );
    if (!isRecord(canary))
      return fail(
        'spec.http[].route',
        'no canary destination to send the managed route to',
        'traffic.backend_not_found',
      );
    const { weight: _weight, ...canaryDestination } = canary;
    routes = [...others, build(destinations, canaryDestination)];
  }
  const rank = (route: unknown): number => {
    const index =
      isRecord(route) && typeof route['name'] === 'string' ? managedRouteNames.indexOf(route['name']) : -1;
    return index < 0 ? managedRouteNames.length : index;
  };
  const ordered = routes
    .map((route, index) => ({ route, index }))
    .sort((a, b) => rank(a.route) - rank(b.route) || a.index - b.index);
  return { ...live, spec: { ...spec, http: ordered.map((entry) => entry.route) } };
}

/** Edits the `rollouts-pod-template-hash` label of one subset: set to `hash`, or removed when there is none. */
function pinned(subset: Record<string, unknown>, hash: string | undefined): Record<string, unknown> {
  const labels = isRecord(subset['labels']) ? { ...subset['labels'] } : {};
  if (hash) labels[HASH_LABEL] = hash;
  else delete labels[HASH_LABEL];
  return { ...subset, labels };
}

/**
 * The edit of the DestinationRule: the canary subset selects the canary's pods and the stable subset
 * the stable's (their `rollouts-pod-template-hash` label), as Argo does; with no canary the canary
 * subset's hash label is removed (it gets weight 0). Other subsets and fields are kept.
 */
export function destinationRuleEdit(rule: NonNullable<Subsets>, namespace: string): RouteEdit {
  const id = objectName('DestinationRule', namespace, rule.name);
  return {
    resource: ISTIO_RESOURCES.DestinationRule,
    namespace,
    name: rule.name,
    translate: (live: RouteObject | undefined, weights: RouteWeights) => {
      if (live === undefined)
        return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
      const spec = live['spec'];
      const subsets = isRecord(spec) ? spec['subsets'] : undefined;
      if (!isRecord(spec) || !Array.isArray(subsets))
        return new RouteTranslationError(
          'traffic.route_malformed',
          id,
          'spec.subsets',
          'missing or not a list',
        );
      for (const name of [rule.canarySubsetName, rule.stableSubsetName])
        if (!subsets.some((subset: unknown) => isRecord(subset) && subset['name'] === name))
          return new RouteTranslationError(
            'traffic.backend_not_found',
            id,
            'spec.subsets[].name',
            `no subset named "${name}"`,
          );
      const written = subsets.map((subset: unknown) => {
        if (!isRecord(subset)) return subset;
        if (subset['name'] === rule.canarySubsetName) return pinned(subset, weights.canaryHash);
        if (subset['name'] === rule.stableSubsetName) return pinned(subset, weights.stableHash);
        return subset;
      });
      return { ...live, spec: { ...spec, subsets: written } };
    },
    // The subsets carry no weights: the VirtualService's routes do.
    readWeights: () => [],
  };
}
