// What the built-in kinds' Go structs say about list merging: strategic merge keys and apply list types.

/** How a strategic merge patch merges one list field (from the Go struct's patchStrategy tags). */
export interface StrategicListRule {
  /** Items merge by this key; undefined means a list of primitives merged as a set. */
  mergeKey?: string;
}

/** One field of a struct: its nested struct type and, for lists, how they merge. */
export interface FieldRule {
  type?: string;
  list?: StrategicListRule;
  /** `patchStrategy:"replace"` on an object field: the patch's value replaces it whole (PDB selector). */
  replace?: boolean;
}

/** The fields of a struct that need more than the default (maps merge, lists replace). */
export type StructRule = Record<string, FieldRule>;

const conditionsByType: FieldRule = { list: { mergeKey: 'type' } };

/** Built-in struct types, by name; only fields with non-default patch behaviour are listed. */
export const structRules: Record<string, StructRule> = {
  ObjectMeta: { finalizers: { list: {} }, ownerReferences: { list: { mergeKey: 'uid' } } },
  PodTemplateSpec: { metadata: { type: 'ObjectMeta' }, spec: { type: 'PodSpec' } },
  PodSpec: {
    volumes: { list: { mergeKey: 'name' } },
    initContainers: { type: 'Container', list: { mergeKey: 'name' } },
    containers: { type: 'Container', list: { mergeKey: 'name' } },
    ephemeralContainers: { type: 'Container', list: { mergeKey: 'name' } },
    imagePullSecrets: { list: { mergeKey: 'name' } },
    hostAliases: { list: { mergeKey: 'ip' } },
    topologySpreadConstraints: { list: { mergeKey: 'topologyKey' } },
    resourceClaims: { list: { mergeKey: 'name' } },
    schedulingGates: { list: { mergeKey: 'name' } },
  },
  Container: {
    ports: { list: { mergeKey: 'containerPort' } },
    env: { list: { mergeKey: 'name' } },
    volumeMounts: { list: { mergeKey: 'mountPath' } },
    volumeDevices: { list: { mergeKey: 'devicePath' } },
  },
  PodStatus: {
    conditions: conditionsByType,
    podIPs: { list: { mergeKey: 'ip' } },
    hostIPs: { list: { mergeKey: 'ip' } },
  },
  WorkloadStatus: { conditions: conditionsByType },
  TemplatedSpec: { template: { type: 'PodTemplateSpec' } },
  CronJobSpec: { jobTemplate: { type: 'JobTemplateSpec' } },
  JobTemplateSpec: { metadata: { type: 'ObjectMeta' }, spec: { type: 'TemplatedSpec' } },
  ServiceSpec: { ports: { list: { mergeKey: 'port' } } },
  ServiceAccount: { metadata: { type: 'ObjectMeta' }, secrets: { list: { mergeKey: 'name' } } },
  Pod: { metadata: { type: 'ObjectMeta' }, spec: { type: 'PodSpec' }, status: { type: 'PodStatus' } },
  Workload: {
    metadata: { type: 'ObjectMeta' },
    spec: { type: 'TemplatedSpec' },
    status: { type: 'WorkloadStatus' },
  },
  CronJob: { metadata: { type: 'ObjectMeta' }, spec: { type: 'CronJobSpec' } },
  Service: {
    metadata: { type: 'ObjectMeta' },
    spec: { type: 'ServiceSpec' },
    status: { type: 'WorkloadStatus' },
  },
  Namespace: { metadata: { type: 'ObjectMeta' }, status: { type: 'WorkloadStatus' } },
  PodTemplate: { metadata: { type: 'ObjectMeta' }, template: { type: 'PodTemplateSpec' } },
  PodDisruptionBudgetSpec: { selector: { replace: true } },
  PodDisruptionBudget: {
    metadata: { type: 'ObjectMeta' },
    spec: { type: 'PodDisruptionBudgetSpec' },
    status: { type: 'WorkloadStatus' },
  },
  Object: { metadata: { type: 'ObjectMeta' } },
};

const builtInGroups = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'coordination.k8s.io',
  'networking.k8s.io',
  'events.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'discovery.k8s.io',
  'admissionregistration.k8s.io',
  'scheduling.k8s.io',
  'node.k8s.io',
  'certificates.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'resource.k8s.io',
]);

/** True when the group is served by Go types in the real API server (so strategic merge is allowed). */
export function isBuiltInGroup(group: string): boolean {
  return builtInGroups.has(group);
}

/** The struct type at the root of a built-in kind (undefined for custom resources). */
export function rootStructFor(gvk: { group: string; kind: string }): string | undefined {
  if (!isBuiltInGroup(gvk.group)) return undefined;
  switch (gvk.kind) {
    case 'Pod':
      return 'Pod';
    case 'ReplicaSet':
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'Job':
    case 'ReplicationController':
      return 'Workload';
    case 'CronJob':
      return 'CronJob';
    case 'Service':
      return 'Service';
    case 'Namespace':
      return 'Namespace';
    case 'ServiceAccount':
      return 'ServiceAccount';
    case 'PodTemplate':
      return 'PodTemplate';
    case 'PodDisruptionBudget':
      return 'PodDisruptionBudget';
    default:
      return 'Object';
  }
}
