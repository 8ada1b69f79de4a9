// What the sandbox knows about one served resource: its group/version/kind, plural, scope and subresources.
import type { SchemaNode } from '../validation/crd-schema.ts';

/** One REST resource the sandbox serves, built in or from a CRD. */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Whether `/status` exists; then main-resource writes ignore status and `/status` writes only status. */
  statusSubresource: boolean;
  /** Where `/scale` reads and writes replicas, when the kind has a scale subresource. */
  scale?: ScaleSubresource;
  /** Whether POST `/eviction` (a policy/v1 Eviction, honouring PodDisruptionBudgets) exists: pods only. */
  eviction?: boolean;
  /** Whether POST `/token` (an authentication.k8s.io/v1 TokenRequest) exists: service accounts only. */
  tokenRequest?: boolean;
  /** Whether metadata.generation is kept (bumped on every non-metadata, non-status change). */
  tracksGeneration: boolean;
  /** Extra columns for `kubectl get` (JSONPath-ish dotted paths, from CRD additionalPrinterColumns). */
  printerColumns: PrinterColumn[];
  /** Set for resources served from a CRD: that CRD's name. */
  crdName?: string;
  /** A CRD version's openAPIV3Schema, compiled: custom resources are pruned, defaulted and validated by it. */
  schema?: SchemaNode;
  /** The CRD's legacy `spec.preserveUnknownFields: true`: validated and defaulted, never pruned. */
  preserveUnknownFields?: boolean;
}

/** A CRD's `subresources.scale` (JSON paths such as `.spec.replicas`); built-ins use the same shape. */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** `apps/v1` or `v1` for the core group. */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** Splits `apps/v1` into group and version; `v1` is the core group. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function builtin(
  group: string,
  version: string,
  kind: string,
  plural: string,
  opts: Partial<
    Pick<
      ResourceType,
      | 'namespaced'
      | 'shortNames'
      | 'statusSubresource'
      | 'tracksGeneration'
      | 'categories'
      | 'scale'
      | 'eviction'
      | 'tokenRequest'
    >
  >,
): ResourceType {
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced: opts.namespaced ?? true,
    shortNames: opts.shortNames ?? [],
    categories: opts.categories ?? [],
    statusSubresource: opts.statusSubresource ?? false,
    tracksGeneration: opts.tracksGeneration ?? false,
    printerColumns: [],
    ...(opts.scale ? { scale: opts.scale } : {}),
    ...(opts.eviction ? { eviction: true } : {}),
    ...(opts.tokenRequest ? { tokenRequest: true } : {}),
  };
}

/** The scale subresource of ReplicaSets and Deployments (selector rendered from spec.selector). */
const workloadScale: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
};

/** The built-in kinds the sandbox serves from the start. */
export const BUILTIN_RESOURCE_TYPES: readonly ResourceType[] = [
  builtin('', 'v1', 'Namespace', 'namespaces', {
    namespaced: false,
    shortNames: ['ns'],
    statusSubresource: true,
  }),
  builtin('', 'v1', 'Pod', 'pods', {
    shortNames: ['po'],
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
    eviction: true,
  }),
  builtin('', 'v1', 'Service', 'services', {
    shortNames: ['svc'],
    statusSubresource: true,
    categories: ['all'],
  }),
  builtin('', 'v1', 'ConfigMap', 'configmaps', { shortNames: ['cm'] }),
  // Read by a Rollout whose workloadRef names one (no controller acts on it, as in a real cluster).
  builtin('', 'v1', 'PodTemplate', 'podtemplates', {}),
  builtin('', 'v1', 'Secret', 'secrets', {}),
  builtin('', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
  builtin('', 'v1', 'ServiceAccount', 'serviceaccounts', { shortNames: ['sa'], tokenRequest: true }),
  builtin('events.k8s.io', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
  builtin('apps', 'v1', 'ReplicaSet', 'replicasets', {
    shortNames: ['rs'],
    scale: workloadScale,
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
  }),
  builtin('apps', 'v1', 'Deployment', 'deployments', {
    shortNames: ['deploy'],
    scale: workloadScale,
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
  }),
  builtin('batch', 'v1', 'Job', 'jobs', {
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
  }),
  builtin('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', {
    shortNames: ['pdb'],
    statusSubresource: true,
    tracksGeneration: true,
  }),
  builtin('coordination.k8s.io', 'v1', 'Lease', 'leases', {}),
  builtin('networking.k8s.io', 'v1', 'Ingress', 'ingresses', {
    shortNames: ['ing'],
    statusSubresource: true,
    tracksGeneration: true,
  }),
  // Stored and served (so an install with one applies whole); the sandbox has no network to enforce it on.
  builtin('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', { shortNames: ['netpol'] }),
  builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', {
    namespaced: false,
    shortNames: ['crd', 'crds'],
    statusSubresource: true,
    tracksGeneration: true,
  }),
  // Stored and served always (so an install applies whole); enforced only in RBAC mode (src/sandbox/rbac).
  builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', { namespaced: false }),
  builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', {
    namespaced: false,
  }),
  builtin('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', {}),
  builtin('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', {}),
];
