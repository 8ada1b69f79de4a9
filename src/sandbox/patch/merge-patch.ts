// JSON merge patch (RFC 7386): objects merge key by key, null removes, anything else replaces.

import { isPlainObject } from '../controllers/kube-object.ts';

/** Merges in place: `target` is a private copy, `patch` values are copied as they go in. */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergeInto(result[key], value);
  }
  return result;
}

/** Applies an RFC 7386 merge patch; returns a new value and never mutates target or patch. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  return mergeInto(isPlainObject(patch) ? structuredClone(target) : undefined, patch);
}
