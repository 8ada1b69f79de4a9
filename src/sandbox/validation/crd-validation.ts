// Value validation of custom resources against a structural schema, reported as kube-apiserver reports it.
import type { StatusCause } from '../api/api-status-error.ts';
import { isPlainObject } from '../controllers/kube-object.ts';
import { jsonEqual } from '../patch/json-equal.ts';
import type { SchemaNode } from './crd-schema.ts';
import { goFieldValue, goFloat } from './go-value-format.ts';

/** The JSON type kube-openapi names for a decoded value (`integer` for integral numbers). */
function jsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return Array.isArray(value) ? 'array' : 'object';
}

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

function isIpv6(text: string): boolean {
  if (!text.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(text)) return false;
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === '' ? [] : half.split(':')));
  const last = groups[groups.length - 1] ?? '';
  const v4 = last.includes('.');
  if (v4 && !IPV4.test(last)) return false;
  const hex = v4 ? groups.slice(0, -1) : groups;
  if (!hex.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  const count = hex.length + (v4 ? 2 : 0);
  return halves.length === 2 ? count < 8 : count === 8;
}

/** The string formats kube-openapi's default registry checks that are cheap here; others pass. */
const FORMAT_CHECKS: Record<string, (text: string) => boolean> = {
  byte: (t) => BASE64.test(t),
  'date-time': (t) => DATE_TIME.test(t) && !Number.isNaN(Date.parse(t.replace(' ', 'T'))),
  ipv4: (t) => IPV4.test(t),
  ipv6: isIpv6,
  uuid: (t) => UUID.test(t),
};

/** Collects field errors for one value; `path` is kube-openapi's (`spec.rules[0].backendRefs[0].weight`). */
class SchemaValidation {
  readonly causes: StatusCause[] = [];

  private invalid(field: string, value: unknown, detail: string): void {
    this.causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${goFieldValue(value)}: ${detail}`,
      field,
    });
  }

  private typeInvalid(field: string, value: unknown, detail: string): void {
    this.causes.push({
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: ${goFieldValue(value)}: ${detail}`,
      field,
    });
  }

  /** kube-openapi's composite errors (oneOf, anyOf, allOf, not) carry no field: Go prints a nil path. */
  private composite(detail: string): void {
    this.causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "": ${detail}`,
      field: '<nil>',
    });
  }

  validate(value: unknown, node: SchemaNode, path: string): void {
    if (value === null || value === undefined) {
      const expected = node.intOrString ? 'integer,string' : node.type;
      if (expected !== undefined && !node.nullable) {
        this.typeInvalid(path, 'null', `${path} in body must be of type ${expected}: "null"`);
      }
      return;
    }
    if (!this.checkType(value, node, path)) return;
    this.checkComposition(value, node, path);
    if (typeof value === 'string') this.checkString(value, node, path);
    else if (typeof value === 'number') this.checkNumber(value, node, path);
    else if (Array.isArray(value)) this.checkArray(value, node, path);
    if (node.enum && !node.enum.some((allowed) => jsonEqual(allowed, value))) {
      const supported = node.enum.map((v) => JSON.stringify(typeof v === 'string' ? v : JSON.stringify(v)));
      this.causes.push({
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${goFieldValue(value)}: supported values: ${supported.join(', ')}`,
        field: path,
      });
    }
    if (isPlainObject(value)) this.checkObject(value, node, path);
  }

  private checkType(value: unknown, node: SchemaNode, path: string): boolean {
    const actual = jsonTypeOf(value);
    if (node.intOrString) {
      if (actual === 'integer' || actual === 'string') return true;
      this.typeInvalid(path, actual, `${path} in body must be of type integer,string: "${actual}"`);
      return false;
    }
    const expected = node.type;
    if (expected === undefined || expected === actual) return true;
    if (expected === 'number' && actual === 'integer') return true;
    this.typeInvalid(path, actual, `${path} in body must be of type ${expected}: "${actual}"`);
    return false;
  }

  private checkString(value: string, node: SchemaNode, path: string): void {
    const length = node.maxLength !== undefined || node.minLength !== undefined ? [...value].length : 0;
    if (node.maxLength !== undefined && length > node.maxLength) {
      this.causes.push({
        reason: 'FieldValueTooLong',
        message: `Too long: may not be more than ${node.maxLength} ${node.maxLength === 1 ? 'byte' : 'bytes'}`,
        field: path,
      });
    }
    if (node.minLength !== undefined && length < node.minLength) {
      this.invalid(path, value, `${path} in body should be at least ${node.minLength} chars long`);
    }
    if (node.pattern && !node.pattern.regex.test(value)) {
      this.invalid(path, value, `${path} in body should match '${node.pattern.source}'`);
    }
    const format = node.format === undefined ? undefined : FORMAT_CHECKS[node.format];
    if (format && !format(value)) {
      this.typeInvalid(
        path,
        value,
        `${path} in body must be of type ${node.format}: ${JSON.stringify(value)}`,
      );
    }
  }

  private checkNumber(value: number, node: SchemaNode, path: string): void {
    if (node.multipleOf !== undefined && node.multipleOf > 0) {
      const ratio = value / node.multipleOf;
      if (Math.abs(ratio - Math.round(ratio)) > 1e-9) {
        this.invalid(path, value, `${path} in body should be a multiple of ${goFloat(node.multipleOf)}`);
      }
    }
    if (node.maximum !== undefined) {
      const max = goFloat(node.maximum);
      if (node.exclusiveMaximum ? value >= node.maximum : value > node.maximum) {
        const relation = node.exclusiveMaximum ? 'less than' : 'less than or equal to';
        this.invalid(path, value, `${path} in body should be ${relation} ${max}`);
      }
    }
    if (node.minimum !== undefined) {
      const min = goFloat(node.minimum);
      if (node.exclusiveMinimum ? value <= node.minimum : value < node.minimum) {
        const relation = node.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
        this.invalid(path, value, `${path} in body should be ${relation} ${min}`);
      }
    }
  }

  private checkArray(value: unknown[], node: SchemaNode, path: string): void {
    if (node.minItems !== undefined && value.length < node.minItems) {
      this.invalid(path, value.length, `${path} in body should have at least ${node.minItems} items`);
    }
    if (node.maxItems !== undefined && value.length > node.maxItems) {
      this.causes.push({
        reason: 'FieldValueTooMany',
        message: `Too many: ${value.length}: must have at most ${node.maxItems} items`,
        field: path,
      });
    }
    const items = node.items;
    if (items) value.forEach((item, i) => this.validate(item, items, `${path}[${i}]`));
    if (node.listType === 'set') this.checkUnique(value, path, (item) => item);
    else if (node.listType === 'map' && node.listMapKeys) {
      const keys = node.listMapKeys;
      this.checkUnique(value, path, (item) =>
        isPlainObject(item)
          ? Object.fromEntries(keys.filter((k) => k in item).map((k) => [k, item[k]]))
          : item,
      );
    }
  }

  /** x-kubernetes-list-type set/map: a repeated value (or map key) is a Duplicate, as the API server says. */
  private checkUnique(value: unknown[], path: string, keyOf: (item: unknown) => unknown): void {
    const seen: unknown[] = [];
    value.forEach((item, i) => {
      const key = keyOf(item);
      if (seen.some((earlier) => jsonEqual(earlier, key))) {
        this.causes.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${goFieldValue(key)}`,
          field: `${path}[${i}]`,
        });
      } else seen.push(key);
    });
  }

  private checkObject(value: Record<string, unknown>, node: SchemaNode, path: string): void {
    const count = Object.keys(value).length;
    if (node.minProperties !== undefined && count < node.minProperties) {
      this.invalid(path, count, `${path} in body should have at least ${node.minProperties} properties`);
    }
    if (node.maxProperties !== undefined && count > node.maxProperties) {
      this.causes.push({
        reason: 'FieldValueTooMany',
        message: `Too many: ${count}: must have at most ${node.maxProperties} items`,
        field: path,
      });
    }
    const additional = node.additionalProperties;
    for (const key of Object.keys(value)) {
      const property = node.properties?.get(key);
      if (property) this.validate(value[key], property, childPath(path, key));
      else if (additional !== undefined && additional !== true) {
        this.validate(value[key], additional, childPath(path, key));
      }
    }
    for (const key of node.required ?? []) {
      if (!Object.hasOwn(value, key) || value[key] === undefined) {
        this.causes.push({
          reason: 'FieldValueRequired',
          message: 'Required value',
          field: childPath(path, key),
        });
      }
    }
  }

  /** allOf/anyOf/oneOf/not: value-only sub-schemas (Istio's "exactly one of exact/prefix/regex"). */
  private checkComposition(value: unknown, node: SchemaNode, path: string): void {
    const run = (sub: SchemaNode): StatusCause[] => {
      const nested = new SchemaValidation();
      nested.validate(value, sub, path);
      return nested.causes;
    };
    const fewest = (results: StatusCause[][]): StatusCause[] =>
      results.reduce((best, r) => (r.length < best.length ? r : best), results[0] ?? []);
    const quoted = JSON.stringify(path);
    if (node.anyOf) {
      const failures: StatusCause[][] = [];
      for (const sub of node.anyOf) {
        const causes = run(sub);
        if (causes.length === 0) break;
        failures.push(causes);
      }
      if (failures.length === node.anyOf.length) {
        this.composite(`${quoted} must validate at least one schema (anyOf)`);
        this.causes.push(...fewest(failures));
      }
    }
    if (node.oneOf) {
      const results = node.oneOf.map(run);
      const valid = results.filter((r) => r.length === 0).length;
      if (valid !== 1) {
        this.composite(
          `${quoted} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`,
        );
        if (valid === 0) this.causes.push(...fewest(results));
      }
    }
    if (node.allOf) {
      const results = node.allOf.map(run);
      const valid = results.filter((r) => r.length === 0).length;
      for (const r of results) this.causes.push(...r);
      if (valid !== results.length) {
        this.composite(
          `${quoted} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`,
        );
      }
    }
    if (node.not && run(node.not).length === 0)
      this.composite(`${quoted} must not validate the schema (not)`);
  }
}

/**
 * Validates a pruned and defaulted custom resource against its version's schema and returns the causes
 * kube-apiserver would answer 422 with (`spec.rules[0].backendRefs[0].weight: Invalid value: ...`).
 * `path` is where `value` sits in the object ('' for the whole object).
 */
export function validateAgainstSchema(value: unknown, node: SchemaNode, path = ''): StatusCause[] {
  const validation = new SchemaValidation();
  validation.validate(value, node, path);
  return validation.causes;
}
