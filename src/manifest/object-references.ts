// Which fields of Rollouts, analysis templates and Experiments name another object (a ConfigMap, a Service, a template…), as one table.
import type { FieldPath } from './field-path.ts';
import { GATEWAY_API_PLUGIN } from './traffic-routing.ts';
import { CONTOUR_PLUGIN, OPENSHIFT_PLUGIN } from './traffic-router-plugins.ts';

/** A kind in the API groups it may be written in ('' is the core group). */
export interface GroupedKind {
  kind: string;
  groups: readonly string[];
  /** The version to match, only where a kind is known by one (core kinds: v1). */
  version?: string;
}

/**
 * One field that names another object: in objects of kind `referrer`, the value at `path` (keys from
 * the object's root; a list met on the way is walked item by item, and a list of names at the end
 * names one object per item) is the `metadata.name` of a `target` in the same namespace.
 */
export interface ReferenceField {
  referrer: GroupedKind;
  path: readonly string[];
  target: GroupedKind;
}

// A Rollout, its analysis templates and Experiments are accepted in Argo's group and in ours.
const ARGO_GROUPS = ['argoproj.io', 'rollgate.dev'] as const;
const argo = (kind: string): GroupedKind => ({ kind, groups: ARGO_GROUPS });
const core = (kind: string): GroupedKind => ({ kind, groups: [''], version: 'v1' });

export const ROLLOUT: GroupedKind = argo('Rollout');
export const ANALYSIS_TEMPLATE: GroupedKind = argo('AnalysisTemplate');
export const CLUSTER_ANALYSIS_TEMPLATE: GroupedKind = argo('ClusterAnalysisTemplate');
export const EXPERIMENT: GroupedKind = argo('Experiment');
export const CONFIG_MAP: GroupedKind = core('ConfigMap');
export const SECRET: GroupedKind = core('Secret');

const SERVICE = core('Service');
const SERVICE_ACCOUNT = core('ServiceAccount');
const PERSISTENT_VOLUME_CLAIM = core('PersistentVolumeClaim');
const PRIORITY_CLASS: GroupedKind = { kind: 'PriorityClass', groups: ['scheduling.k8s.io'] };
const INGRESS: GroupedKind = { kind: 'Ingress', groups: ['networking.k8s.io', 'extensions'] };
const DEPLOYMENT: GroupedKind = { kind: 'Deployment', groups: ['apps'] };
const HORIZONTAL_POD_AUTOSCALER: GroupedKind = { kind: 'HorizontalPodAutoscaler', groups: ['autoscaling'] };
const GATEWAY = (kind: string): GroupedKind => ({ kind, groups: ['gateway.networking.k8s.io'] });
const ISTIO = (kind: string): GroupedKind => ({ kind, groups: ['networking.istio.io'] });
const APP_MESH = (kind: string): GroupedKind => ({ kind, groups: ['appmesh.k8s.aws'] });

/** Where each kind keeps a pod spec (the pods it runs, or the Job an analysis metric runs). */
export const POD_SPEC_PATHS: ReadonlyArray<{ referrer: GroupedKind; path: readonly string[] }> = [
  { referrer: ROLLOUT, path: ['spec', 'template', 'spec'] },
  { referrer: EXPERIMENT, path: ['spec', 'templates', 'template', 'spec'] },
  ...[ANALYSIS_TEMPLATE, CLUSTER_ANALYSIS_TEMPLATE].map((referrer) => ({
    referrer,
    path: ['spec', 'metrics', 'provider', 'job', 'spec', 'template', 'spec'],
  })),
];

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

// Inside a pod spec: what Kubernetes itself resolves by name when it starts the pod.
const POD_SPEC_REFERENCES: ReadonlyArray<{ path: string; target: GroupedKind }> = [
  { path: 'volumes/configMap/name', target: CONFIG_MAP },
  { path: 'volumes/projected/sources/configMap/name', target: CONFIG_MAP },
  { path: 'volumes/secret/secretName', target: SECRET },
  { path: 'volumes/projected/sources/secret/name', target: SECRET },
  { path: 'volumes/csi/nodePublishSecretRef/name', target: SECRET },
  { path: 'volumes/azureFile/secretName', target: SECRET },
  ...['cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos'].map((volume) => ({
    path: `volumes/${volume}/secretRef/name`,
    target: SECRET,
  })),
  { path: 'volumes/persistentVolumeClaim/claimName', target: PERSISTENT_VOLUME_CLAIM },
  { path: 'imagePullSecrets/name', target: SECRET },
  { path: 'serviceAccountName', target: SERVICE_ACCOUNT },
  { path: 'priorityClassName', target: PRIORITY_CLASS },
  ...CONTAINER_LISTS.flatMap((list) => [
    { path: `${list}/env/valueFrom/configMapKeyRef/name`, target: CONFIG_MAP },
    { path: `${list}/envFrom/configMapRef/name`, target: CONFIG_MAP },
    { path: `${list}/env/valueFrom/secretKeyRef/name`, target: SECRET },
    { path: `${list}/envFrom/secretRef/name`, target: SECRET },
  ]),
];

const CANARY = 'spec/strategy/canary';
const ROUTING = `${CANARY}/trafficRouting`;
const BLUE_GREEN = 'spec/strategy/blueGreen';
/**
 * The Gateway API configuration: Rollgate's own `gatewayAPI` block and Argo's plugin of the same shape
 * (the plugin's key holds a "/", so these paths are lists of keys).
 */
const GATEWAY_API_BLOCKS: ReadonlyArray<readonly string[]> = [
  [...ROUTING.split('/'), 'gatewayAPI'],
  [...ROUTING.split('/'), 'plugins', GATEWAY_API_PLUGIN],
];

// The Rollout's own references: the objects its strategy and traffic router read and edit by name.
const ROLLOUT_REFERENCES: ReadonlyArray<{ path: string | readonly string[]; target: GroupedKind }> = [
  { path: `${CANARY}/canaryService`, target: SERVICE },
  { path: `${CANARY}/stableService`, target: SERVICE },
  { path: `${CANARY}/pingPong/pingService`, target: SERVICE },
  { path: `${CANARY}/pingPong/pongService`, target: SERVICE },
  { path: `${BLUE_GREEN}/activeService`, target: SERVICE },
  { path: `${BLUE_GREEN}/previewService`, target: SERVICE },
  { path: `${ROUTING}/alb/rootService`, target: SERVICE },
  { path: `${ROUTING}/smi/rootService`, target: SERVICE },
  { path: `${ROUTING}/nginx/stableIngress`, target: INGRESS },
  { path: `${ROUTING}/nginx/stableIngresses`, target: INGRESS },
  { path: `${ROUTING}/alb/ingress`, target: INGRESS },
  { path: `${ROUTING}/alb/ingresses`, target: INGRESS },
  { path: `${ROUTING}/istio/virtualService/name`, target: ISTIO('VirtualService') },
  { path: `${ROUTING}/istio/virtualServices/name`, target: ISTIO('VirtualService') },
  { path: `${ROUTING}/istio/destinationRule/name`, target: ISTIO('DestinationRule') },
  {
    path: `${ROUTING}/smi/trafficSplitName`,
    target: { kind: 'TrafficSplit', groups: ['split.smi-spec.io'] },
  },
  ...GATEWAY_API_BLOCKS.flatMap((block) =>
    (
      [
        ['httpRoute', 'HTTPRoute'],
        ['httpRoutes/name', 'HTTPRoute'],
        ['grpcRoute', 'GRPCRoute'],
        ['grpcRoutes/name', 'GRPCRoute'],
        ['tcpRoute', 'TCPRoute'],
        ['tcpRoutes/name', 'TCPRoute'],
      ] as const
    ).map(([field, kind]) => ({ path: [...block, ...field.split('/')], target: GATEWAY(kind) })),
  ),
  { path: `${ROUTING}/ambassador/mappings`, target: { kind: 'Mapping', groups: ['getambassador.io'] } },
  { path: `${ROUTING}/appMesh/virtualService/name`, target: APP_MESH('VirtualService') },
  { path: `${ROUTING}/appMesh/virtualNodeGroup/canaryVirtualNodeRef/name`, target: APP_MESH('VirtualNode') },
  { path: `${ROUTING}/appMesh/virtualNodeGroup/stableVirtualNodeRef/name`, target: APP_MESH('VirtualNode') },
  {
    path: `${ROUTING}/traefik/weightedTraefikServiceName`,
    target: { kind: 'TraefikService', groups: ['traefik.io', 'traefik.containo.us'] },
  },
  { path: `${ROUTING}/apisix/route/name`, target: { kind: 'ApisixRoute', groups: ['apisix.apache.org'] } },
  // Argo's router plugins Rollgate drives (their keys hold a "/": lists of keys). An OpenShift
  // `namespace/name` entry names no object of the render, so kustomize leaves it as written.
  {
    path: [...ROUTING.split('/'), 'plugins', CONTOUR_PLUGIN, 'httpProxies'],
    target: { kind: 'HTTPProxy', groups: ['projectcontour.io'] },
  },
  {
    path: [...ROUTING.split('/'), 'plugins', OPENSHIFT_PLUGIN, 'routes'],
    target: { kind: 'Route', groups: ['route.openshift.io'] },
  },
  { path: 'spec/workloadRef/name', target: DEPLOYMENT },
];

/** Where a Rollout names analysis templates (`templateName`, with `clusterScope` choosing the kind). */
const ROLLOUT_TEMPLATE_NAMES = [
  `${CANARY}/analysis/templates/templateName`,
  `${CANARY}/steps/analysis/templates/templateName`,
  `${CANARY}/steps/experiment/analyses/templateName`,
  `${BLUE_GREEN}/prePromotionAnalysis/templates/templateName`,
  `${BLUE_GREEN}/postPromotionAnalysis/templates/templateName`,
];

/** A path written with "/" between keys, or already a list of keys. */
function splitPath(path: string | readonly string[]): readonly string[] {
  return typeof path === 'string' ? path.split('/') : path;
}

/** Every field of the table, in a stable order. */
export const REFERENCE_FIELDS: readonly ReferenceField[] = [
  ...POD_SPEC_PATHS.flatMap(({ referrer, path }) =>
    POD_SPEC_REFERENCES.map((reference) => ({
      referrer,
      path: [...path, ...reference.path.split('/')],
      target: reference.target,
    })),
  ),
  ...ROLLOUT_REFERENCES.map(({ path, target }) => ({ referrer: ROLLOUT, path: splitPath(path), target })),
  ...[ANALYSIS_TEMPLATE, CLUSTER_ANALYSIS_TEMPLATE].flatMap((target) => [
    ...ROLLOUT_TEMPLATE_NAMES.map((path) => ({ referrer: ROLLOUT, path: path.split('/'), target })),
    { referrer: EXPERIMENT, path: ['spec', 'analyses', 'templateName'], target },
  ]),
  // An analysis argument may read its value from a Secret; Argo resolves it when the run starts.
  ...[ANALYSIS_TEMPLATE, CLUSTER_ANALYSIS_TEMPLATE].map((referrer) => ({
    referrer,
    path: ['spec', 'args', 'valueFrom', 'secretKeyRef', 'name'],
    target: SECRET,
  })),
  // An autoscaler that scales a Rollout names it as it would a Deployment.
  { referrer: HORIZONTAL_POD_AUTOSCALER, path: ['spec', 'scaleTargetRef', 'name'], target: ROLLOUT },
];

/** The API group of an apiVersion ('' for the core group's `v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** True when an object of this apiVersion and kind is one of `kind`'s. */
export function isKind(obj: { apiVersion: string; kind: string }, kind: GroupedKind): boolean {
  return obj.kind === kind.kind && kind.groups.includes(groupOf(obj.apiVersion));
}

/** One name written at a reference field: where (a full field path, list indexes included) and what. */
export interface WrittenReference {
  path: FieldPath;
  name: string;
}

/**
 * The names an object writes at a reference field's path: every list met on the way is walked, and a
 * list of strings at the end gives one name per item. Absent fields and values that are not strings
 * give nothing (the schema checks report those).
 */
export function namesAt(value: unknown, path: readonly string[]): WrittenReference[] {
  const found: WrittenReference[] = [];
  const walk = (node: unknown, at: Array<string | number>, rest: readonly string[]): void => {
    if (Array.isArray(node)) {
      node.forEach((item: unknown, index) => walk(item, [...at, index], rest));
      return;
    }
    const [key, ...tail] = rest;
    if (key === undefined) {
      if (typeof node === 'string' && node !== '') found.push({ path: at, name: node });
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const child = (node as Record<string, unknown>)[key];
    if (child !== undefined) walk(child, [...at, key], tail);
  };
  walk(value, [], path);
  return found;
}
