// `{{args.NAME}}` substitution in every string of a metric (never in keys, never through JSON text).
import { MissingArgumentError } from './missing-argument-error.ts';

// Argo trims the tag, so "{{ args.namespace }}" works too.
const PLACEHOLDER = /\{\{\s*args\.([A-Za-z0-9_.-]+)\s*\}\}/g;

/**
 * Returns a copy of `value` with each `{{args.NAME}}` in a string replaced by `values.get(NAME)`.
 * Names in `deferred` (secret-backed arguments) are left in place to be filled at measurement time.
 * @throws MissingArgumentError for a placeholder naming an argument with no value.
 */
export function substituteArgs<T>(
  value: T,
  values: ReadonlyMap<string, string>,
  deferred: ReadonlySet<string> = new Set(),
  templates: readonly string[] = [],
): T {
  return walk(value, values, deferred, templates) as T;
}

function walk(
  value: unknown,
  values: ReadonlyMap<string, string>,
  deferred: ReadonlySet<string>,
  templates: readonly string[],
): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (whole, name: string) => {
      const v = values.get(name);
      if (v !== undefined) return v;
      if (deferred.has(name)) return whole;
      throw new MissingArgumentError(name, templates, 'is used as {{args.' + name + '}} but has no value');
    });
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, values, deferred, templates));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty, not assignment: a manifest key "__proto__" must stay a plain key.
      Object.defineProperty(out, key, {
        value: walk(item, values, deferred, templates),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** Names of the arguments a value refers to as `{{args.NAME}}`. */
export function referencedArgs(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(PLACEHOLDER)) into.add(m[1] as string);
  else if (Array.isArray(value)) for (const item of value) referencedArgs(item, into);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) referencedArgs(item, into);
  return into;
}
