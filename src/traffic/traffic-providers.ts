// The provider table: which trafficRouting field names a router, how its config is read, and the objects it edits.
import { formatFieldPath, type FieldPath } from '../manifest/field-path.ts';
import type { Rollout, TrafficRouting } from '../manifest/rollout.ts';
import {
  GATEWAY_API_PLUGIN,
  readGatewayApiConfig,
  readIstioConfig,
  readNginxConfig,
  readSmiConfig,
  readTraefikConfig,
  readAmbassadorConfig,
  readApisixConfig,
  readAppMeshConfig,
  type ConfigProblem,
} from '../manifest/traffic-routing.ts';
import { ISTIO_RESOURCES, destinationRuleEdit, virtualServiceEdit } from './istio-routes.ts';
import { GATEWAY_API_RESOURCES, gatewayRouteEdit } from './gateway-api-routes.ts';
import { INGRESS_RESOURCE, canaryIngressEdit } from './nginx-ingress.ts';
import type { RouteEdit, RouteResource } from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';
import { TRAFFIC_SPLIT_RESOURCE, trafficSplitEdit } from './smi-traffic-split.ts';
import { TRAEFIK_SERVICE_RESOURCE, traefikServiceEdit } from './traefik-service.ts';
import { MAPPING_RESOURCE, canaryMappingEdit } from './ambassador-mappings.ts';
import { APISIX_ROUTE_RESOURCE, apisixRouteEdit } from './apisix-route.ts';
import { APP_MESH_RESOURCES, appMeshEdits } from './app-mesh-routes.ts';
import { HTTP_PROXY_RESOURCE, httpProxyEdit } from './contour-httpproxy.ts';
import { OPENSHIFT_ROUTE_RESOURCE, openShiftRouteEdit } from './openshift-route.ts';
import {
  CONTOUR_PLUGIN,
  OPENSHIFT_PLUGIN,
  readContourPluginConfig,
  readOpenShiftPluginConfig,
} from '../manifest/traffic-router-plugins.ts';
import { pingPongRoles, readAlbConfig, readPingPongConfig } from '../manifest/alb-traffic-routing.ts';
import { albIngressEdit } from './alb-ingress.ts';

/** What a provider's edits need to know of the rollout. */
interface RoutedRollout {
  name: string;
  namespace: string;
  uid: string;
  managedRouteNames: readonly string[];
}

/** One row of the table. */
export interface TrafficProvider {
  /** How docs, logs and validation name it (its field under trafficRouting, or `plugins.<name>`). */
  name: string;
  /** The configuration block, when this rollout sets it. */
  configOf(routing: TrafficRouting): unknown;
  /** The APIs its edits read and write (RBAC, docs). */
  resources: readonly RouteResource[];
  /** Those of `resources` whose objects the router owns and creates (RBAC: create too). */
  creates: readonly RouteResource[];
  /** Those of `resources` whose objects the router also removes (RBAC: delete too). */
  deletes?: readonly RouteResource[] | undefined;
  /** The objects to edit, or why the configuration cannot be used. */
  edits(config: unknown, rollout: RoutedRollout): RouteEdit[] | RouteTranslationError;
  /** Whether it weights canaryService/stableService (Istio with a DestinationRule weights subsets instead). */
  needsServices(config: unknown): boolean;
  /**
   * Whether its translators send an experiment step's weighted templates their share (`RouteWeights.additional`),
   * as Argo's router does. The same rows are listed for validation in src/manifest (EXPERIMENT_WEIGHT_ROUTERS).
   */
  experimentDestinations: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first problem of a configuration block, as an error naming the rollout and the field. */
function configError(
  rollout: RoutedRollout,
  block: FieldPath,
  problems: ConfigProblem[],
): RouteTranslationError {
  const [first] = problems;
  return new RouteTranslationError(
    'traffic.config_invalid',
    objectName('Rollout', rollout.namespace, rollout.name),
    formatFieldPath(['spec', 'strategy', 'canary', 'trafficRouting', ...block, ...(first?.field ?? [])]),
    first?.message ?? 'invalid',
  );
}

/**
 * A plugin block's `namespace` (from the plugins' READMEs) that is not the rollout's: the plugin would
 * ignore it and edit the rollout's namespace, so Rollgate refuses to guess which one was meant.
 */
function pluginNamespaceError(
  rollout: RoutedRollout,
  plugin: string,
  namespace: string | undefined,
): RouteTranslationError | undefined {
  if (namespace === undefined || namespace === rollout.namespace) return undefined;
  return configError(
    rollout,
    ['plugins', plugin],
    [
      {
        field: ['namespace'],
        message: `"${namespace}" is not the rollout's namespace "${rollout.namespace}" (the plugin edits the rollout's)`,
      },
    ],
  );
}

function gatewayApiEdits(
  block: FieldPath,
): (config: unknown, rollout: RoutedRollout) => RouteEdit[] | RouteTranslationError {
  return (config, rollout) => {
    const read = readGatewayApiConfig(config);
    if (Array.isArray(read)) return configError(rollout, block, read);
    const namespace = read.namespace ?? rollout.namespace;
    return read.routes.map((ref) => gatewayRouteEdit(ref, namespace, rollout.managedRouteNames));
  };
}

const gatewayResources = Object.values(GATEWAY_API_RESOURCES);

/**
 * Every router Rollgate drives, in the order their edits are written. Gateway API has two rows: the
 * native field and the Argo plugin's block, read the same way.
 */
export const TRAFFIC_PROVIDERS: readonly TrafficProvider[] = [
  {
    name: 'gatewayAPI',
    configOf: (routing) => routing.gatewayAPI,
    resources: gatewayResources,
    creates: [],
    edits: gatewayApiEdits(['gatewayAPI']),
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: `plugins.${GATEWAY_API_PLUGIN}`,
    configOf: (routing) => (isRecord(routing.plugins) ? routing.plugins[GATEWAY_API_PLUGIN] : undefined),
    resources: gatewayResources,
    creates: [],
    edits: gatewayApiEdits(['plugins', GATEWAY_API_PLUGIN]),
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: 'smi',
    configOf: (routing) => routing.smi,
    resources: [TRAFFIC_SPLIT_RESOURCE],
    creates: [TRAFFIC_SPLIT_RESOURCE],
    edits: (config, rollout) => {
      const read = readSmiConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['smi'], read);
      return [trafficSplitEdit(read, rollout.namespace, { name: rollout.name, uid: rollout.uid })];
    },
    needsServices: () => true,
    experimentDestinations: true,
  },
  {
    name: 'istio',
    configOf: (routing) => routing.istio,
    resources: Object.values(ISTIO_RESOURCES),
    creates: [],
    // The DestinationRule first, as Argo: the subsets select the right pods before weights move.
    edits: (config, rollout) => {
      const read = readIstioConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['istio'], read);
      const rule = read.destinationRule;
      return [
        ...(rule ? [destinationRuleEdit(rule, rollout.namespace)] : []),
        ...read.virtualServices.map((ref) =>
          virtualServiceEdit(ref, ref.namespace ?? rollout.namespace, rule, rollout.managedRouteNames),
        ),
      ];
    },
    needsServices: (config) => !(isRecord(config) && config['destinationRule'] !== undefined),
    experimentDestinations: true,
  },
  {
    name: 'nginx',
    configOf: (routing) => routing.nginx,
    // The stable Ingresses are read; the canary Ingresses are the router's own.
    resources: [INGRESS_RESOURCE],
    creates: [INGRESS_RESOURCE],
    edits: (config, rollout) => {
      const read = readNginxConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['nginx'], read);
      return read.stableIngresses.map((stable) =>
        canaryIngressEdit(read, stable, rollout.namespace, { name: rollout.name, uid: rollout.uid }),
      );
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: 'traefik',
    configOf: (routing) => routing.traefik,
    resources: [TRAEFIK_SERVICE_RESOURCE],
    creates: [],
    edits: (config, rollout) => {
      const read = readTraefikConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['traefik'], read);
      return [traefikServiceEdit(read, rollout.namespace)];
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: 'ambassador',
    configOf: (routing) => routing.ambassador,
    // The listed Mappings are read; the canary Mappings are the router's own, removed at weight 0.
    resources: [MAPPING_RESOURCE],
    creates: [MAPPING_RESOURCE],
    deletes: [MAPPING_RESOURCE],
    edits: (config, rollout) => {
      const read = readAmbassadorConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['ambassador'], read);
      return read.mappings.map((mapping) =>
        canaryMappingEdit(mapping, rollout.namespace, { name: rollout.name, uid: rollout.uid }),
      );
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: 'apisix',
    configOf: (routing) => routing.apisix,
    resources: [APISIX_ROUTE_RESOURCE],
    creates: [],
    edits: (config, rollout) => {
      const read = readApisixConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['apisix'], read);
      return [apisixRouteEdit(read, rollout.namespace)];
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: 'appMesh',
    configOf: (routing) => routing.appMesh,
    // The VirtualService is read; its VirtualRouter and the two VirtualNodes are written.
    resources: Object.values(APP_MESH_RESOURCES),
    creates: [],
    edits: (config, rollout) => {
      const read = readAppMeshConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['appMesh'], read);
      return appMeshEdits(read, rollout.namespace);
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: `plugins.${CONTOUR_PLUGIN}`,
    configOf: (routing) => (isRecord(routing.plugins) ? routing.plugins[CONTOUR_PLUGIN] : undefined),
    resources: [HTTP_PROXY_RESOURCE],
    creates: [],
    edits: (config, rollout) => {
      const read = readContourPluginConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['plugins', CONTOUR_PLUGIN], read);
      const elsewhere = pluginNamespaceError(rollout, CONTOUR_PLUGIN, read.namespace);
      if (elsewhere) return elsewhere;
      return read.httpProxies.map((name) => httpProxyEdit(name, rollout.namespace));
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: `plugins.${OPENSHIFT_PLUGIN}`,
    configOf: (routing) => (isRecord(routing.plugins) ? routing.plugins[OPENSHIFT_PLUGIN] : undefined),
    resources: [OPENSHIFT_ROUTE_RESOURCE],
    creates: [],
    edits: (config, rollout) => {
      const read = readOpenShiftPluginConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['plugins', OPENSHIFT_PLUGIN], read);
      const elsewhere = pluginNamespaceError(rollout, OPENSHIFT_PLUGIN, read.namespace);
      if (elsewhere) return elsewhere;
      return read.routes.map((ref) => openShiftRouteEdit(ref.name, ref.namespace ?? rollout.namespace));
    },
    needsServices: () => true,
    experimentDestinations: false,
  },
  {
    name: 'alb',
    configOf: (routing) => routing.alb,
    // The listed Ingresses are the user's: their action annotation (and header-route paths) are edited.
    resources: [INGRESS_RESOURCE],
    creates: [],
    edits: (config, rollout) => {
      const read = readAlbConfig(config);
      if (Array.isArray(read)) return configError(rollout, ['alb'], read);
      return read.ingresses.map((ingress) => albIngressEdit(read, ingress, rollout.namespace, rollout));
    },
    needsServices: () => true,
    experimentDestinations: true,
  },
];

/** The routing a rollout asks for: the objects to edit and the weight scale. */
export interface RolloutRoutes {
  /** The providers set (table names), for logs. */
  providers: string[];
  edits: RouteEdit[];
  /** maxTrafficWeight (100 unless set). */
  total: number;
  /** Empty when no provider set weights Services (Istio with a DestinationRule only). */
  canaryService: string;
  stableService: string;
  /** Every provider set sends experiment templates their share ({@link TrafficProvider.experimentDestinations}). */
  experimentDestinations: boolean;
}

/**
 * The routes a rollout's trafficRouting asks Rollgate to drive, through {@link TRAFFIC_PROVIDERS}.
 * Undefined when it sets no provider of the table (no trafficRouting: the replica ratio is the split).
 * A configuration no router can follow (no route named, services missing or the same) is an error
 * naming the field, so the rollout waits with that message instead of routing blind.
 */
export function routesOfRollout(rollout: Rollout): RolloutRoutes | RouteTranslationError | undefined {
  const canary = rollout.spec.strategy.canary;
  const routing = canary?.trafficRouting;
  if (canary === undefined || routing === undefined) return undefined;
  const set = TRAFFIC_PROVIDERS.filter((provider) => provider.configOf(routing) !== undefined);
  if (set.length === 0) return undefined;
  const namespace = rollout.metadata.namespace ?? 'default';
  const id = objectName('Rollout', namespace, rollout.metadata.name);
  // With ping-pong (ALB only), the ping and pong Services are weighted in their roles of the moment.
  const pingPong = canary.pingPong === undefined ? undefined : readPingPongConfig(canary.pingPong);
  if (Array.isArray(pingPong))
    return new RouteTranslationError(
      'traffic.config_invalid',
      id,
      formatFieldPath(['spec', 'strategy', 'canary', 'pingPong', ...(pingPong[0]?.field ?? [])]),
      pingPong[0]?.message ?? 'invalid',
    );
  const roles =
    pingPong === undefined ? undefined : pingPongRoles(pingPong, rollout.status?.canary?.stablePingPong);
  const canaryService = roles?.canaryService ?? canary.canaryService ?? '';
  const stableService = roles?.stableService ?? canary.stableService ?? '';
  const needing = set.find((provider) => provider.needsServices(provider.configOf(routing)));
  if (needing !== undefined && (!canaryService || !stableService))
    return new RouteTranslationError(
      'traffic.config_invalid',
      id,
      `spec.strategy.canary.${canaryService ? 'stableService' : 'canaryService'}`,
      `required with trafficRouting.${needing.name}`,
    );
  if (canaryService !== '' && canaryService === stableService)
    return new RouteTranslationError(
      'traffic.config_invalid',
      id,
      'spec.strategy.canary.canaryService',
      `must differ from stableService ("${stableService}")`,
    );
  const routed: RoutedRollout = {
    name: rollout.metadata.name,
    namespace,
    uid: rollout.metadata.uid ?? '',
    managedRouteNames: (routing.managedRoutes ?? []).map((route) => route.name),
  };
  const edits: RouteEdit[] = [];
  for (const provider of set) {
    const found = provider.edits(provider.configOf(routing), routed);
    if (found instanceof RouteTranslationError) return found;
    edits.push(...found);
  }
  return {
    providers: set.map((provider) => provider.name),
    edits,
    total: routing.maxTrafficWeight ?? 100,
    canaryService,
    stableService,
    experimentDestinations: set.every((provider) => provider.experimentDestinations),
  };
}
