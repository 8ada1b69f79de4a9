// Strategic merge patch: merge patch plus per-field list merge keys and $patch/$retainKeys directives.

import { isPlainObject } from '../controllers/kube-object.ts';
import { jsonEqual } from './json-equal.ts';
import type { FieldRule, StructRule } from './patch-schema.ts';
import { rootStructFor, structRules } from './patch-schema.ts';
import { StrategicMergePatchError, StrategicMergeUnsupportedError } from './patch-errors.ts';

const deleteMarker = Symbol('delete');
const deleteFromPrimitiveList = '$deleteFromPrimitiveList/';
const setElementOrder = '$setElementOrder/';

function rulesOf(field: FieldRule | undefined): StructRule | undefined {
  return field?.type === undefined ? undefined : structRules[field.type];
}

/** A patch value with every directive key removed (for values inserted as they are). */
function withoutDirectives(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((item) => !(isPlainObject(item) && item.$patch !== undefined && Object.keys(item).length === 1))
      .map(withoutDirectives);
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key.startsWith('$')) continue;
    if (item === null) continue;
    out[key] = withoutDirectives(item);
  }
  return out;
}

function mergeList(original: unknown, patch: unknown[], field: FieldRule, path: string): unknown[] {
  if (patch.some((item) => isPlainObject(item) && item.$patch === 'replace')) {
    return patch.filter((item) => !(isPlainObject(item) && item.$patch === 'replace')).map(withoutDirectives);
  }
  const result: unknown[] = Array.isArray(original) ? original : [];
  const mergeKey = field.list?.mergeKey;
  if (mergeKey === undefined) {
    for (const item of patch) if (!result.some((existing) => jsonEqual(existing, item))) result.push(item);
    return result;
  }
  for (const item of patch) {
    if (!isPlainObject(item) || !Object.hasOwn(item, mergeKey))
      throw new StrategicMergePatchError(
        `map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`,
        path,
      );
    const key = item[mergeKey];
    if (item.$patch === 'delete') {
      for (let index = result.length - 1; index >= 0; index -= 1) {
        const existing = result[index];
        if (isPlainObject(existing) && jsonEqual(existing[mergeKey], key)) result.splice(index, 1);
      }
      continue;
    }
    const index = result.findIndex(
      (existing) => isPlainObject(existing) && jsonEqual(existing[mergeKey], key),
    );
    const merged = mergeMap(
      index >= 0 ? result[index] : undefined,
      item,
      rulesOf(field),
      `${path}[${mergeKey}=${JSON.stringify(key)}]`,
    );
    if (merged === deleteMarker) {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) result[index] = merged;
    else result.push(merged);
  }
  return result;
}

function reorder(list: unknown, order: unknown, mergeKey: string | undefined): unknown {
  if (!Array.isArray(list) || !Array.isArray(order)) return list;
  const keyOf = (item: unknown): unknown =>
    mergeKey !== undefined && isPlainObject(item) ? item[mergeKey] : item;
  const rank = (item: unknown): number => {
    const at = order.findIndex((entry) => jsonEqual(keyOf(entry), keyOf(item)));
    return at === -1 ? order.length : at;
  };
  return list
    .map((item, index) => ({ item, index }))
    .sort((a, b) => rank(a.item) - rank(b.item) || a.index - b.index)
    .map(({ item }) => item);
}

function mergeMap(
  original: unknown,
  patch: Record<string, unknown>,
  rules: StructRule | undefined,
  path: string,
): Record<string, unknown> | typeof deleteMarker {
  const directive = patch.$patch;
  if (directive === 'delete') return deleteMarker;
  if (directive === 'replace') return withoutDirectives(patch) as Record<string, unknown>;
  if (directive !== undefined && directive !== 'merge')
    throw new StrategicMergePatchError(`Unknown patch type: ${String(directive)}`, path);
  const result: Record<string, unknown> = isPlainObject(original) ? original : {};
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain))
      throw new StrategicMergePatchError('$retainKeys must be a list of strings', path);
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(deleteFromPrimitiveList)) continue;
    const field = key.slice(deleteFromPrimitiveList.length);
    const current = result[field];
    if (Array.isArray(current) && Array.isArray(value))
      result[field] = current.filter((item) => !value.some((gone) => jsonEqual(gone, item)));
  }
  const orders: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(deleteFromPrimitiveList)) continue;
    if (key.startsWith(setElementOrder)) {
      orders.push([key.slice(setElementOrder.length), value]);
      continue;
    }
    const childPath = `${path}.${key}`;
    const field = rules?.[key];
    if (value === null) {
      delete result[key];
    } else if (isPlainObject(value) && field?.replace === true) {
      result[key] = withoutDirectives(value);
    } else if (isPlainObject(value)) {
      const merged = mergeMap(result[key], value, rulesOf(field), childPath);
      if (merged === deleteMarker) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value) && field?.list !== undefined) {
      result[key] = mergeList(result[key], value, field, childPath);
    } else {
      result[key] = withoutDirectives(value);
    }
  }
  for (const [field, order] of orders)
    result[field] = reorder(result[field], order, rules?.[field]?.list?.mergeKey);
  return result;
}

/** True when the real API server accepts strategic merge patches for this kind (built-in kinds only). */
export function supportsStrategicMerge(gvk: { group: string; version: string; kind: string }): boolean {
  return rootStructFor(gvk) !== undefined;
}

/**
 * Applies a strategic merge patch as the API server does for built-in kinds: lists with a patch merge
 * key (containers, env, ports, volumes, volumeMounts, conditions, imagePullSecrets, …) merge item by
 * item, finalizers merge as a set, other lists replace; `$patch: delete|replace|merge`, `$retainKeys`,
 * `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are honoured. Custom resources throw
 * StrategicMergeUnsupportedError (the server answers 415, as the real one does).
 */
export function applyStrategicMergePatch(
  target: unknown,
  patch: unknown,
  gvk: { group: string; version: string; kind: string },
): unknown {
  const root = rootStructFor(gvk);
  if (root === undefined) throw new StrategicMergeUnsupportedError(gvk);
  if (!isPlainObject(patch))
    throw new StrategicMergePatchError('a strategic merge patch must be a JSON object', '');
  // One deep copy up front; the merge then works in place on the copy.
  const merged = mergeMap(structuredClone(target), patch, structRules[root], '');
  if (merged === deleteMarker)
    throw new StrategicMergePatchError('$patch: delete is not allowed at the root', '');
  return merged;
}
