// App Mesh: the VirtualNodes pinned to the revisions' pods, and the weighted targets of the VirtualService's VirtualRouter.
import type { AppMeshConfig } from '../manifest/traffic-routing.ts';
import type { RouteEdit, RouteObject, RouteResource, RouteWeights, RouteWeightsRead } from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

const appMesh = (plural: string, kind: string): RouteResource => ({
  group: 'appmesh.k8s.aws',
  versions: ['v1beta2'],
  plural,
  kind,
});

/** The App Mesh controller's kinds Rollgate reads and writes (`appmesh.k8s.aws/v1beta2`, as Argo). */
export const APP_MESH_RESOURCES = {
  VirtualService: appMesh('virtualservices', 'VirtualService'),
  VirtualRouter: appMesh('virtualrouters', 'VirtualRouter'),
  VirtualNode: appMesh('virtualnodes', 'VirtualNode'),
} as const;

/** The label a VirtualNode's podSelector is pinned with (the ReplicaSets' pod-template hash). */
const HASH_LABEL = 'rollouts-pod-template-hash';

/**
 * What the canary VirtualNode selects while there is no canary (or it is the stable revision): a value no
 * pod carries. The App Mesh admission webhook refuses two VirtualNodes with the same podSelector, so the
 * canary one cannot take the stable hash. The same value as Argo's, so a mesh moved from Argo reads alike.
 */
export const NO_CANARY_HASH = 'canary-hash';

/** The route kinds whose action has weighted targets (App Mesh's others do not split). */
const WEIGHTED_ROUTE_KINDS = ['httpRoute', 'http2Route', 'grpcRoute', 'tcpRoute'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The edits of an App Mesh rollout, in the order Argo makes them: both VirtualNodes' podSelector pinned to
 * their revision's hash first (so each node selects the right pods before weight moves), then the
 * weights in the VirtualRouter that provides the VirtualService.
 */
export function appMeshEdits(config: AppMeshConfig, namespace: string): RouteEdit[] {
  return [
    virtualNodeEdit(config.stableVirtualNode, namespace, (weights) => weights.stableHash),
    virtualNodeEdit(config.canaryVirtualNode, namespace, (weights) =>
      weights.canaryHash === undefined || weights.canaryHash === weights.stableHash
        ? NO_CANARY_HASH
        : weights.canaryHash,
    ),
    virtualRouterEdit(config, namespace),
  ];
}

/** A VirtualNode whose `spec.podSelector.matchLabels` get the hash label; everything else stays as read. */
function virtualNodeEdit(
  name: string,
  namespace: string,
  hashOf: (weights: RouteWeights) => string,
): RouteEdit {
  const id = objectName('VirtualNode', namespace, name);
  return {
    resource: APP_MESH_RESOURCES.VirtualNode,
    namespace,
    name,
    translate: (live, weights) => {
      if (live === undefined)
        return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
      const spec = isRecord(live['spec']) ? live['spec'] : {};
      const selector = isRecord(spec['podSelector']) ? spec['podSelector'] : {};
      const labels = isRecord(selector['matchLabels']) ? selector['matchLabels'] : {};
      const podSelector = { ...selector, matchLabels: { ...labels, [HASH_LABEL]: hashOf(weights) } };
      return { ...live, spec: { ...spec, podSelector } };
    },
    // A VirtualNode carries no weights.
    readWeights: () => [],
  };
}

/**
 * The VirtualRouter edit. Which router that is, the VirtualService says
 * (`spec.provider.virtualRouter.virtualRouterRef`, its namespace defaulting to the VirtualService's): the
 * VirtualService is read before each write and `resolve` gives the edit of the router it names.
 */
function virtualRouterEdit(config: AppMeshConfig, namespace: string): RouteEdit {
  const serviceId = objectName('VirtualService', namespace, config.virtualService);
  const nodes = { canary: config.canaryVirtualNode, stable: config.stableVirtualNode, namespace };
  const unresolved = () =>
    new RouteTranslationError('traffic.route_missing', serviceId, 'metadata.name', 'not read yet');
  return {
    resource: APP_MESH_RESOURCES.VirtualRouter,
    namespace,
    // Until the VirtualService is read, the edit goes by the VirtualService's name.
    name: config.virtualService,
    derivedFrom: { resource: APP_MESH_RESOURCES.VirtualService, namespace, name: config.virtualService },
    resolve: (service) => {
      const router = routerOf(serviceId, namespace, service);
      if (router instanceof RouteTranslationError) return router;
      const id = objectName('VirtualRouter', router.namespace, router.name);
      return {
        resource: APP_MESH_RESOURCES.VirtualRouter,
        namespace: router.namespace,
        name: router.name,
        translate: (live, weights) => weightedTargets(id, live, weights, config.routes, nodes),
        readWeights: (live) => readTargetWeights(id, live, config.routes, nodes),
      };
    },
    translate: unresolved,
    readWeights: unresolved,
  };
}

/** The VirtualRouter a VirtualService is provided by, or why it names none. */
function routerOf(
  serviceId: string,
  namespace: string,
  service: RouteObject | undefined,
): { namespace: string; name: string } | RouteTranslationError {
  if (service === undefined)
    return new RouteTranslationError('traffic.route_missing', serviceId, 'metadata.name', 'not found');
  const spec = isRecord(service['spec']) ? service['spec'] : {};
  const provider = isRecord(spec['provider']) ? spec['provider'] : {};
  const router = isRecord(provider['virtualRouter']) ? provider['virtualRouter'] : {};
  const ref = router['virtualRouterRef'];
  if (!isRecord(ref) || typeof ref['name'] !== 'string' || ref['name'] === '')
    return new RouteTranslationError(
      'traffic.route_malformed',
      serviceId,
      'spec.provider.virtualRouter.virtualRouterRef',
      'missing: the VirtualService must be provided by a VirtualRouter (a virtualNode provider cannot split)',
    );
  const refNamespace =
    typeof ref['namespace'] === 'string' && ref['namespace'] !== '' ? ref['namespace'] : namespace;
  return { namespace: refNamespace, name: ref['name'] };
}

interface VirtualNodeTargets {
  canary: string;
  stable: string;
  /** The rollout's namespace: a target elsewhere is not one of its nodes. */
  namespace: string;
}

/** A route of the router with the weighted targets of its kind, as read. */
interface WeightedRoute {
  index: number;
  name: string;
  kind: (typeof WEIGHTED_ROUTE_KINDS)[number];
  route: Record<string, unknown>;
  targets: unknown[];
}

/** Which of the two nodes a weighted target sends to, if either. */
function roleOf(
  target: unknown,
  nodes: VirtualNodeTargets,
  routerNamespace: string,
): 'canary' | 'stable' | undefined {
  if (!isRecord(target) || !isRecord(target['virtualNodeRef'])) return undefined;
  const ref = target['virtualNodeRef'];
  const refNamespace =
    typeof ref['namespace'] === 'string' && ref['namespace'] !== '' ? ref['namespace'] : routerNamespace;
  if (refNamespace !== nodes.namespace) return undefined;
  if (ref['name'] === nodes.canary) return 'canary';
  if (ref['name'] === nodes.stable) return 'stable';
  return undefined;
}

/**
 * The routes that carry the split: those named in `virtualService.routes`, else every route with a target of
 * either node (as Argo); or the error naming what is missing or malformed.
 */
function splitRoutes(
  id: string,
  live: RouteObject,
  names: readonly string[],
  nodes: VirtualNodeTargets,
): WeightedRoute[] | RouteTranslationError {
  const spec = live['spec'];
  const routes = isRecord(spec) ? spec['routes'] : undefined;
  if (!Array.isArray(routes))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.routes', 'missing or not a list');
  const routerNamespace = namespaceOf(live, nodes);
  const found: WeightedRoute[] = [];
  for (const [index, route] of routes.entries()) {
    if (!isRecord(route) || typeof route['name'] !== 'string')
      return new RouteTranslationError(
        'traffic.route_malformed',
        id,
        `spec.routes[${index}].name`,
        'missing',
      );
    const name = route['name'];
    if (names.length > 0 && !names.includes(name)) continue;
    const kind = WEIGHTED_ROUTE_KINDS.find((candidate) => isRecord(route[candidate]));
    const action = kind === undefined ? undefined : (route[kind] as Record<string, unknown>)['action'];
    const targets = isRecord(action) ? action['weightedTargets'] : undefined;
    if (kind === undefined || !Array.isArray(targets)) {
      if (names.length === 0) continue;
      return new RouteTranslationError(
        'traffic.route_malformed',
        id,
        `spec.routes[${index}]`,
        `route "${name}" has no ${WEIGHTED_ROUTE_KINDS.join('/')} action.weightedTargets`,
      );
    }
    const roles = targets.map((target) => roleOf(target, nodes, routerNamespace));
    if (names.length === 0 && !roles.some((role) => role !== undefined)) continue;
    for (const role of ['canary', 'stable'] as const)
      if (!roles.includes(role))
        return new RouteTranslationError(
          'traffic.backend_not_found',
          id,
          `spec.routes[${index}].${kind}.action.weightedTargets`,
          `route "${name}" has no target for the ${role} VirtualNode "${nodes[role]}"`,
        );
    found.push({ index, name, kind, route, targets });
  }
  const missing = names.find((name) => !found.some((route) => route.name === name));
  if (missing !== undefined)
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      'spec.routes[].name',
      `no route is named "${missing}"`,
    );
  if (found.length === 0)
    return new RouteTranslationError(
      'traffic.backend_not_found',
      id,
      'spec.routes[].*.action.weightedTargets',
      `no route targets the VirtualNodes "${nodes.canary}" and "${nodes.stable}"`,
    );
  return found;
}

function weightedTargets(
  id: string,
  live: RouteObject | undefined,
  weights: RouteWeights,
  names: readonly string[],
  nodes: VirtualNodeTargets,
): RouteObject | RouteTranslationError {
  if (live === undefined)
    return new RouteTranslationError('traffic.route_missing', id, 'metadata.name', 'not found');
  const found = splitRoutes(id, live, names, nodes);
  if (found instanceof RouteTranslationError) return found;
  const spec = live['spec'] as Record<string, unknown>;
  const routes = [...(spec['routes'] as unknown[])];
  for (const { index, kind, route, targets } of found) {
    const rule = route[kind] as Record<string, unknown>;
    const action = rule['action'] as Record<string, unknown>;
    const written = targets.map((target) => {
      const role = roleOf(target, nodes, namespaceOf(live, nodes));
      if (role === undefined) return target;
      const weight = role === 'canary' ? weights.canary : weights.total - weights.canary;
      return { ...(target as Record<string, unknown>), weight };
    });
    routes[index] = { ...route, [kind]: { ...rule, action: { ...action, weightedTargets: written } } };
  }
  return { ...live, spec: { ...spec, routes } };
}

/** The router's namespace as read (the rollout's when unset). */
function namespaceOf(live: RouteObject, nodes: VirtualNodeTargets): string {
  const metadata = live['metadata'];
  const namespace = isRecord(metadata) ? metadata['namespace'] : undefined;
  return typeof namespace === 'string' && namespace !== '' ? namespace : nodes.namespace;
}

/** Each split route's two targets' weights (`route <name>`); App Mesh has no default weight. */
function readTargetWeights(
  id: string,
  live: RouteObject,
  names: readonly string[],
  nodes: VirtualNodeTargets,
): RouteWeightsRead[] | RouteTranslationError {
  const found = splitRoutes(id, live, names, nodes);
  if (found instanceof RouteTranslationError) return found;
  const routerNamespace = namespaceOf(live, nodes);
  return found.map(({ name, targets }) => {
    const weightOf = (role: 'canary' | 'stable'): number | undefined => {
      const target = targets.find((candidate) => roleOf(candidate, nodes, routerNamespace) === role);
      return isRecord(target) && typeof target['weight'] === 'number' ? target['weight'] : undefined;
    };
    return { route: `route ${name}`, canary: weightOf('canary'), stable: weightOf('stable') };
  });
}
