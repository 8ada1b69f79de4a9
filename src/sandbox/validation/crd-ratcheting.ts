// Validation ratcheting (kube-apiserver 1.30+): an update may keep an invalid value the object already had.
import type { StatusCause } from '../api/api-status-error.ts';
import { isPlainObject } from '../controllers/kube-object.ts';
import { jsonEqual } from '../patch/json-equal.ts';
import { fieldSchema, type SchemaNode } from './crd-schema.ts';

type Step = { key: string } | { index: number };

/** The path a cause is about: its field, or the quoted path of a composite (`<nil>`) cause's message. */
function pathOf(cause: StatusCause): string | undefined {
  if (cause.field !== '<nil>') return cause.field;
  return /^Invalid value: "": "(.*?)" must /.exec(cause.message)?.[1];
}

/**
 * Splits `spec.labels.app.kubernetes.io/name` or `spec.rules[0].name` into steps, taking at each object
 * the longest key of `value` the path continues with (map keys may hold dots).
 */
function stepsOf(path: string, value: unknown): Step[] | undefined {
  const steps: Step[] = [];
  let rest = path;
  let cur = value;
  while (rest !== '') {
    const index = /^\[(\d+)\]/.exec(rest);
    if (index) {
      const i = Number(index[1]);
      steps.push({ index: i });
      cur = Array.isArray(cur) ? cur[i] : undefined;
      rest = rest.slice(index[0].length).replace(/^\./, '');
      continue;
    }
    const keys = isPlainObject(cur) ? Object.keys(cur) : [];
    const key =
      keys
        .filter((k) => rest === k || rest.startsWith(`${k}.`) || rest.startsWith(`${k}[`))
        .sort((a, b) => b.length - a.length)[0] ?? /^[^.[]+/.exec(rest)?.[0];
    if (key === undefined) return undefined;
    steps.push({ key });
    cur = isPlainObject(cur) ? cur[key] : undefined;
    rest = rest.slice(key.length).replace(/^\./, '');
  }
  return steps;
}

/** The old list item that corresponds to `item`: same map keys (`map` lists), same value (`set`); else none. */
function correlate(item: unknown, old: unknown[], node: SchemaNode | undefined): unknown {
  if (node?.listType === 'set') return old.find((o) => jsonEqual(o, item));
  if (node?.listType === 'map' && node.listMapKeys && isPlainObject(item)) {
    const keys = node.listMapKeys;
    return old.find((o) => isPlainObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
  }
  return undefined;
}

/** Whether a node on the way to `path` is unchanged from its correlated node in the old object. */
function unchanged(path: string, next: unknown, old: unknown, schema: SchemaNode): boolean {
  const steps = stepsOf(path, next);
  if (!steps) return false;
  let n = next;
  let o = old;
  let node: SchemaNode | undefined = schema;
  for (const step of steps) {
    if (jsonEqual(n, o)) return true;
    if (o === undefined) return false;
    if ('key' in step) {
      n = isPlainObject(n) ? n[step.key] : undefined;
      o = isPlainObject(o) ? o[step.key] : undefined;
      node = node ? fieldSchema(node, step.key) : undefined;
    } else {
      if (!Array.isArray(n) || !Array.isArray(o)) return false;
      n = n[step.index];
      const listNode: SchemaNode | undefined = node;
      o = correlate(n, o, listNode);
      if (o === undefined) return false;
      node = listNode?.items;
    }
  }
  // Both absent under a correlated parent: a required field the old object lacked too.
  return jsonEqual(n, o);
}

/**
 * Drops the causes an update may keep, as kube-apiserver's ratcheting does: those about a value (or a
 * missing required field) unchanged from the old object, where list items correspond only in `map` lists
 * (by their keys) and `set` lists; an atomic list must be unchanged as a whole.
 */
export function ratchetCauses(
  causes: StatusCause[],
  next: unknown,
  old: unknown,
  schema: SchemaNode,
): StatusCause[] {
  return causes.filter((cause) => {
    const path = pathOf(cause);
    return path === undefined || path === '' || !unchanged(path, next, old, schema);
  });
}
