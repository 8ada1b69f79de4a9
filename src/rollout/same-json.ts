// Whether two values print the same canonical JSON, without printing either.
import { canonicalJson } from './pod-template-hash.ts';

const hasOwn = (record: object, key: string): boolean => Object.prototype.hasOwnProperty.call(record, key);

/**
 * `canonicalJson(a) === canonicalJson(b)`, decided member by member: it stops at the first difference and
 * builds no string for what is equal. A pass compares whole statuses and traffic weights this way (live
 * against planned), and two canonical strings of a status cost more than the rest of the comparison's pass.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const aIsObject = typeof a === 'object' && a !== null;
  const bIsObject = typeof b === 'object' && b !== null;
  // Leaves (and a leaf beside an object) print as JSON primitives: NaN as null, undefined as null.
  if (!aIsObject || !bIsObject) return canonicalJson(a) === canonicalJson(b);
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (aIsArray) {
    const left = a as unknown[];
    const right = b as unknown[];
    if (left.length !== right.length) return false;
    for (let i = 0; i < left.length; i++) if (!sameJson(left[i], right[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // Members that are undefined are left out of canonical JSON: only the defined ones are counted.
  let defined = 0;
  for (const key of Object.keys(left)) {
    const member = left[key];
    if (member === undefined) continue;
    defined += 1;
    const other = hasOwn(right, key) ? right[key] : undefined;
    if (other === undefined || !sameJson(member, other)) return false;
  }
  for (const key of Object.keys(right)) if (right[key] !== undefined) defined -= 1;
  return defined === 0;
}
