// Reads a Kubernetes fieldRef path ("metadata.labels['app']", "spec.template.metadata.name") from an object.

const SEGMENT = /^(?:\.?([A-Za-z0-9_-]+)|\[\s*'([^']*)'\s*\]|\[\s*"([^"]*)"\s*\]|\[(\d+)\])/;

/**
 * The value at `fieldPath` in `object` as a string (numbers and booleans stringified), or undefined
 * when the path does not exist, is malformed, or ends at an object. Only own properties are read.
 */
export function readFieldRef(object: unknown, fieldPath: string): string | undefined {
  let rest = fieldPath.trim();
  let current: unknown = object;
  while (rest.length > 0) {
    const m = SEGMENT.exec(rest);
    if (m === null) return undefined;
    rest = rest.slice(m[0].length);
    const key = m[1] ?? m[2] ?? m[3] ?? m[4] ?? '';
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  if (typeof current === 'string') return current;
  if (typeof current === 'number' || typeof current === 'boolean') return String(current);
  return undefined;
}
