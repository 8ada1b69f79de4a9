// A minimal OpenAPI v3 surface: enough for kubectl to see that the server validates fields itself.
import { createHash } from 'node:crypto';
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ResourceType } from '../resources/resource-type.ts';

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const patchParameters = ['dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true },
}));

function itemPath(type: ResourceType): string {
  const base = `/${gvPath(type.group, type.version)}`;
  return type.namespaced
    ? `${base}/namespaces/{namespace}/${type.plural}/{name}`
    : `${base}/${type.plural}/{name}`;
}

/**
 * The document for one group version: a PATCH operation per resource carrying
 * x-kubernetes-group-version-kind and the fieldValidation parameter, and no schemas (so kubectl
 * falls back to its built-in types for strategic merge and leaves validation to this server).
 */
export function openApiGroupVersion(
  registry: ResourceRegistry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const type of types) {
    paths[itemPath(type)] = {
      patch: {
        operationId: `patch${type.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: type.kind },
        parameters: patchParameters,
        responses: { '200': { description: 'OK' } },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes (rollgate sandbox)', version: 'v1.32.0' },
    paths,
    components: { schemas: {} },
  };
}

/** `/openapi/v3`: every served group version with a content hash so kubectl's cache follows CRD changes. */
export function openApiRoot(registry: ResourceRegistry): Record<string, unknown> {
  const seen = new Set<string>();
  const paths: Record<string, unknown> = {};
  for (const type of registry.all()) {
    const key = gvPath(type.group, type.version);
    if (seen.has(key)) continue;
    seen.add(key);
    const doc = openApiGroupVersion(registry, type.group, type.version);
    const hash = createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase();
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { paths };
}
