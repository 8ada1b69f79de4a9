// What an analysis expression can hold: plain JSON-like data, with helpers to recognise and compare it.

/** Tells plain objects (JSON maps, `Object.create(null)`) from class instances, which expressions never touch. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The type names expr-lang prints, used in error messages and by `type()`. */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'string';
  if (Array.isArray(value)) return 'array';
  if (isPlainObject(value)) return 'map';
  return 'unsupported';
}

/**
 * Structural equality as expr-lang defines it: numbers by value (NaN equals nothing), nil equals only
 * nil (and undefined), arrays and maps element by element, different types never equal.
 * `visit` is called once per compared pair so deep comparisons count against the step budget.
 */
export function valuesEqual(a: unknown, b: unknown, visit: () => void): boolean {
  visit();
  if (a === null || a === undefined) return b === null || b === undefined;
  if (typeof a !== 'object' || typeof b !== 'object' || b === null) return a === b;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => valuesEqual(item, b[i], visit));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && valuesEqual(a[key], b[key], visit));
}

/** The value of an own data property, `undefined` when absent; getters are never run. */
export function ownDataValue(
  object: object,
  key: string,
): { found: boolean; value?: unknown; accessor?: boolean } {
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  if (descriptor === undefined) return { found: false };
  if (!('value' in descriptor)) return { found: true, accessor: true };
  return { found: true, value: descriptor.value as unknown };
}
