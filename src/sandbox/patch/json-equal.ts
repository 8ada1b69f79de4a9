// Structural equality of JSON values (key order ignored, array order significant): patch engines compare
// values with it, and the store and controllers use it to skip writes that change nothing.

import { isPlainObject } from '../controllers/kube-object.ts';

/** The keys whose value is not undefined: what JSON serialization keeps. */
function definedKeys(object: Record<string, unknown>): string[] {
  return Object.keys(object).filter((key) => object[key] !== undefined);
}

/** True when a and b are the same JSON value (a key set to undefined counts as absent, as in JSON). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keysA = definedKeys(a);
    if (keysA.length !== definedKeys(b).length) return false;
    return keysA.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}
