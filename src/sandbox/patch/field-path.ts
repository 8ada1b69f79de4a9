// Field paths of server-side apply: path elements in fieldsV1 spelling (f:, k:, v:), lookup and removal.

import { isPlainObject } from '../controllers/kube-object.ts';
import type { ApplyListType } from './apply-list-types.ts';
import { jsonEqual } from './json-equal.ts';

/** One path element as fieldsV1 spells it: `f:name`, `k:{"name":"app"}`, `v:"value"`, `i:0`. */
export type PathElement = string;

/** The key object of a keyed list item (defaults filled), or undefined when a key field is missing. */
export function itemKey(item: unknown, list: ApplyListType): Record<string, unknown> | undefined {
  if (list.kind !== 'map' || !isPlainObject(item)) return undefined;
  const key: Record<string, unknown> = {};
  for (const field of [...list.keys].sort()) {
    const value = item[field] ?? list.defaults[field];
    if (value === undefined) return undefined;
    key[field] = value;
  }
  return key;
}

/** The path element of a keyed list item. */
export function keyElement(key: Record<string, unknown>): PathElement {
  return `k:${JSON.stringify(key)}`;
}

function matchesKey(item: unknown, key: Record<string, unknown>): boolean {
  if (!isPlainObject(item)) return false;
  return Object.entries(key).every(([field, value]) => {
    const actual = item[field];
    return jsonEqual(actual, value) || (actual === undefined && field === 'protocol' && value === 'TCP');
  });
}

const parsedElements = new Map<string, unknown>();

/** JSON.parse of a path element's payload, memoized (the same keys are looked up again and again). */
function parseElement(text: string): unknown {
  let parsed = parsedElements.get(text);
  if (parsed === undefined) {
    parsed = JSON.parse(text) as unknown;
    if (parsedElements.size > 10_000) parsedElements.clear();
    parsedElements.set(text, parsed);
  }
  return parsed;
}

/** Finds the index of the child a path element names inside a parent value; -1 / undefined if absent. */
function childIndex(parent: unknown, element: PathElement): string | number | undefined {
  const tag = element.slice(0, 2);
  const rest = element.slice(2);
  if (tag === 'f:') return isPlainObject(parent) && Object.hasOwn(parent, rest) ? rest : undefined;
  if (!Array.isArray(parent)) return undefined;
  if (tag === 'k:') {
    const key = parseElement(rest) as Record<string, unknown>;
    const index = parent.findIndex((item) => matchesKey(item, key));
    return index === -1 ? undefined : index;
  }
  if (tag === 'v:') {
    const value = parseElement(rest);
    const index = parent.findIndex((item) => jsonEqual(item, value));
    return index === -1 ? undefined : index;
  }
  if (tag === 'i:') {
    const index = Number(rest);
    return index < parent.length ? index : undefined;
  }
  return undefined;
}

/** The value at a path, with whether it exists. */
export function valueAt(root: unknown, path: readonly PathElement[]): { found: boolean; value?: unknown } {
  let current = root;
  for (const element of path) {
    const index = childIndex(current, element);
    if (index === undefined) return { found: false };
    current = (current as Record<string | number, unknown>)[index];
  }
  return { found: true, value: current };
}

/** Removes the value at a path in place; true when something was removed. */
export function removeAt(root: unknown, path: readonly PathElement[]): boolean {
  if (path.length === 0) return false;
  const parent = valueAt(root, path.slice(0, -1));
  if (!parent.found) return false;
  const index = childIndex(parent.value, path[path.length - 1] ?? '');
  if (index === undefined) return false;
  if (Array.isArray(parent.value)) parent.value.splice(Number(index), 1);
  else delete (parent.value as Record<string, unknown>)[String(index)];
  return true;
}

/** A path as the API server prints it in conflict messages: `.spec.containers[name="app"].image`. */
export function formatFieldPath(path: readonly PathElement[]): string {
  return path
    .map((element) => {
      const tag = element.slice(0, 2);
      const rest = element.slice(2);
      if (tag === 'f:') return `.${rest}`;
      if (tag === 'k:') {
        const key = JSON.parse(rest) as Record<string, unknown>;
        return `[${Object.entries(key)
          .map(([field, value]) => `${field}=${JSON.stringify(value)}`)
          .join(',')}]`;
      }
      if (tag === 'v:') return `[=${rest}]`;
      return `[${rest}]`;
    })
    .join('');
}
