// The `/scale` subresource: an autoscaling/v1 Scale view of a workload's replicas (kubectl scale, HPAs).
import type { ResourceType, ScaleSubresource } from '../resources/resource-type.ts';
import type { StoredObject } from '../store/object-store.ts';

function parts(path: string): string[] {
  return path
    .replace(/^\./, '')
    .split('.')
    .filter((p) => p !== '');
}

function getAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of parts(path)) {
    cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[part] : undefined;
  }
  return cur;
}

function setAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = parts(path);
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    if (typeof next !== 'object' || next === null) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (last !== undefined) cur[last] = value;
}

/** Renders a LabelSelector object (`matchLabels` + `matchExpressions`) as selector text. */
export function selectorText(selector: unknown): string {
  const s = (selector ?? {}) as {
    matchLabels?: Record<string, string>;
    matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
  };
  const terms = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const values = `(${(e.values ?? []).join(',')})`;
    if (e.operator === 'In') terms.push(`${e.key} in ${values}`);
    else if (e.operator === 'NotIn') terms.push(`${e.key} notin ${values}`);
    else if (e.operator === 'Exists') terms.push(e.key);
    else if (e.operator === 'DoesNotExist') terms.push(`!${e.key}`);
  }
  return terms.join(',');
}

/** The Scale object for a workload. */
export function toScale(
  type: ResourceType & { scale: ScaleSubresource },
  obj: StoredObject,
): Record<string, unknown> {
  const { scale } = type;
  const specReplicas = getAt(obj, scale.specReplicasPath);
  const statusReplicas = getAt(obj, scale.statusReplicasPath);
  const selector =
    scale.labelSelectorPath !== undefined
      ? getAt(obj, scale.labelSelectorPath)
      : type.crdName === undefined
        ? selectorText(getAt(obj, '.spec.selector'))
        : undefined;
  const meta = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: meta.name,
      ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
    status: {
      replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
      ...(typeof selector === 'string' && selector !== '' ? { selector } : {}),
    },
  };
}

/** The workload with its replicas set from a Scale (resourceVersion taken from the Scale when given). */
export function withScale(
  type: ResourceType & { scale: ScaleSubresource },
  obj: StoredObject,
  replicas: number,
  resourceVersion: string | undefined,
): StoredObject {
  const next = structuredClone(obj);
  setAt(next, type.scale.specReplicasPath, replicas);
  if (resourceVersion !== undefined && resourceVersion !== '')
    next.metadata.resourceVersion = resourceVersion;
  return next;
}
