// A deep copy of a JSON value, for the objects a pass copies before it edits them (a Rollout read from
// the cache, a pod template given its defaults).

/**
 * A deep copy of `value`: arrays and plain objects copied member by member, primitives as they are.
 * Anything else (a Date, a Map) goes through `structuredClone`, so the copy is never less faithful
 * than one; on JSON, which is all the API hands out, it costs a fraction of it (no serialization).
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i] as unknown);
    return out as T;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = copyJson((value as Record<string, unknown>)[key]);
    // A `__proto__` member (JSON.parse makes it an own property) stays one, never the copy's prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, {
        value: member,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = member;
  }
  return out as T;
}
