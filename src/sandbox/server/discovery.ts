// Discovery documents (/version, /api, /apis, group versions) as kubectl and client libraries read them.
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ResourceType } from '../resources/resource-type.ts';

/** The Kubernetes version the sandbox reports (it mimics a 1.32 API server). */
export const SANDBOX_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-rollgate-sandbox',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const ITEM_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(name: string, versions: string[], preferred: string): Record<string, unknown> {
  return {
    name,
    versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${name}/${preferred}`, version: preferred },
  };
}

export function groupList(registry: ResourceRegistry): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry.groups().map((g) => groupEntry(g.name, g.versions, g.preferredVersion)),
  };
}

/** `/apis/{group}`: one APIGroup, or undefined when not served. */
export function group(registry: ResourceRegistry, name: string): Record<string, unknown> | undefined {
  const g = registry.groups().find((x) => x.name === name);
  return g
    ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g.name, g.versions, g.preferredVersion) }
    : undefined;
}

function resourceEntries(type: ResourceType): Array<Record<string, unknown>> {
  const main: Record<string, unknown> = {
    name: type.plural,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: ITEM_VERBS,
  };
  if (type.shortNames.length > 0) main.shortNames = type.shortNames;
  if (type.categories.length > 0) main.categories = type.categories;
  const out = [main];
  if (type.statusSubresource) {
    out.push({
      name: `${type.plural}/status`,
      singularName: '',
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: ['get', 'patch', 'update'],
    });
  }
  if (type.scale) {
    out.push({
      name: `${type.plural}/scale`,
      singularName: '',
      namespaced: type.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  }
  if (type.eviction) {
    out.push({
      name: `${type.plural}/eviction`,
      singularName: '',
      namespaced: type.namespaced,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
  }
  if (type.tokenRequest) {
    out.push({
      name: `${type.plural}/token`,
      singularName: '',
      namespaced: type.namespaced,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  }
  return out;
}

/** `/api/v1` or `/apis/{group}/{version}`: the APIResourceList, or undefined when not served. */
export function resourceList(
  registry: ResourceRegistry,
  groupName: string,
  version: string,
): Record<string, unknown> | undefined {
  const types = registry.inGroupVersion(groupName, version);
  if (types.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupName === '' ? version : `${groupName}/${version}`,
    resources: types.flatMap(resourceEntries),
  };
}
