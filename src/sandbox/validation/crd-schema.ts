// A CRD version's openAPIV3Schema read once into typed nodes (compiled patterns), for pruning, defaulting, validation.
import { isPlainObject } from '../controllers/kube-object.ts';
import { CelUnsupportedError, compileCelRule, type CelProgram } from './cel-subset.ts';

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** An `x-kubernetes-validations` rule; `program` is absent when the sandbox cannot evaluate it. */
export interface CelRule {
  rule: string;
  message: string;
  program?: CelProgram;
}

/** One node of a structural schema, as kube-apiserver's apiextensions code reads it. */
export interface SchemaNode {
  type?: SchemaType;
  nullable: boolean;
  intOrString: boolean;
  preserveUnknownFields: boolean;
  /** apiVersion, kind and metadata below this node are kept as at the root (x-kubernetes-embedded-resource). */
  embeddedResource: boolean;
  properties?: Map<string, SchemaNode>;
  /** A map's value schema; `true` keeps any value, absent or `false` allows no other key. */
  additionalProperties?: SchemaNode | true;
  items?: SchemaNode;
  required?: string[];
  enum?: unknown[];
  /** Whether `default` was given (a default may itself be null, false or 0). */
  hasDefault: boolean;
  default?: unknown;
  pattern?: { source: string; regex: RegExp };
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  listType?: string;
  listMapKeys?: string[];
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  not?: SchemaNode;
  rules?: CelRule[];
}

/** Raised for a schema the sandbox cannot read (an invalid pattern); the CRD is then served unvalidated. */
export class CrdSchemaError extends Error {
  override readonly name = 'CrdSchemaError';
  readonly code = 'sandbox.crd.schema-unreadable';
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(`${path}: ${message}`);
  }
}

const SCHEMA_TYPES = new Set<string>(['object', 'array', 'string', 'integer', 'number', 'boolean']);

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

function compileList(value: unknown, path: string): SchemaNode[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((v, i) => compileNode(v, `${path}[${i}]`));
}

/**
 * Compiles a rule within the sandbox's CEL subset. Transition rules (`oldSelf`), `messageExpression`,
 * `fieldPath` and `reason` are left unevaluated rather than half-done.
 */
function compileRule(raw: Record<string, unknown>): CelRule {
  const rule = typeof raw.rule === 'string' ? raw.rule : '';
  const message = typeof raw.message === 'string' ? raw.message : '';
  const plain =
    rule !== '' &&
    !/\boldSelf\b/.test(rule) &&
    raw.messageExpression === undefined &&
    raw.fieldPath === undefined &&
    raw.reason === undefined;
  if (!plain) return { rule, message };
  try {
    return { rule, message, program: compileCelRule(rule) };
  } catch (err) {
    if (err instanceof CelUnsupportedError) return { rule, message };
    throw err;
  }
}

function compileNode(raw: unknown, path: string): SchemaNode {
  const s = isPlainObject(raw) ? raw : {};
  const node: SchemaNode = {
    nullable: s.nullable === true,
    intOrString: s['x-kubernetes-int-or-string'] === true,
    preserveUnknownFields: s['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: s['x-kubernetes-embedded-resource'] === true,
    hasDefault: 'default' in s,
    exclusiveMinimum: s.exclusiveMinimum === true,
    exclusiveMaximum: s.exclusiveMaximum === true,
  };
  if (typeof s.type === 'string' && SCHEMA_TYPES.has(s.type)) node.type = s.type as SchemaType;
  if (node.hasDefault) node.default = s.default;
  if (isPlainObject(s.properties)) {
    node.properties = new Map(
      Object.entries(s.properties).map(([key, value]) => [key, compileNode(value, `${path}.${key}`)]),
    );
  }
  if (s.additionalProperties === true) node.additionalProperties = true;
  else if (isPlainObject(s.additionalProperties)) {
    node.additionalProperties = compileNode(s.additionalProperties, `${path}.additionalProperties`);
  }
  if (isPlainObject(s.items)) node.items = compileNode(s.items, `${path}.items`);
  const required = strings(s.required);
  if (required && required.length > 0) node.required = required;
  if (Array.isArray(s.enum)) node.enum = s.enum;
  if (typeof s.pattern === 'string') {
    try {
      node.pattern = { source: s.pattern, regex: compilePattern(s.pattern) };
    } catch (err) {
      throw new CrdSchemaError(err instanceof Error ? err.message : String(err), `${path}.pattern`);
    }
  }
  if (typeof s.format === 'string' && s.format !== '') node.format = s.format;
  const numeric = {
    minimum: num(s.minimum),
    maximum: num(s.maximum),
    multipleOf: num(s.multipleOf),
    minLength: num(s.minLength),
    maxLength: num(s.maxLength),
    minItems: num(s.minItems),
    maxItems: num(s.maxItems),
    minProperties: num(s.minProperties),
    maxProperties: num(s.maxProperties),
  };
  for (const [key, value] of Object.entries(numeric)) {
    if (value !== undefined) node[key as keyof typeof numeric] = value;
  }
  if (typeof s['x-kubernetes-list-type'] === 'string') node.listType = s['x-kubernetes-list-type'];
  const mapKeys = strings(s['x-kubernetes-list-map-keys']);
  if (mapKeys && mapKeys.length > 0) node.listMapKeys = mapKeys;
  const allOf = compileList(s.allOf, `${path}.allOf`);
  if (allOf) node.allOf = allOf;
  const anyOf = compileList(s.anyOf, `${path}.anyOf`);
  if (anyOf) node.anyOf = anyOf;
  const oneOf = compileList(s.oneOf, `${path}.oneOf`);
  if (oneOf) node.oneOf = oneOf;
  if (isPlainObject(s.not)) node.not = compileNode(s.not, `${path}.not`);
  if (Array.isArray(s['x-kubernetes-validations'])) {
    const rules = s['x-kubernetes-validations'].filter(isPlainObject).map(compileRule);
    if (rules.length > 0) node.rules = rules;
  }
  return node;
}

/**
 * A schema pattern as the API server (Go's RE2) reads it. RE2 and JavaScript agree on the patterns CRDs use
 * and both search unanchored; RE2's whole-pattern case-insensitive flag `(?i)`, at the start or right after
 * `^` (the Prometheus Operator's CRDs use it), becomes JavaScript's `i` flag.
 */
export function compilePattern(pattern: string): RegExp {
  const flag = /^(\^?)\(\?i\)/.exec(pattern);
  if (flag === null) return new RegExp(pattern, 'u');
  return new RegExp(`${flag[1]}${pattern.slice(flag[0].length)}`, 'iu');
}

/** Reads a CRD version's `schema.openAPIV3Schema`; throws {@link CrdSchemaError} for an unusable pattern. */
export function compileCrdSchema(openAPIV3Schema: unknown): SchemaNode {
  return compileNode(openAPIV3Schema, 'openAPIV3Schema');
}

/** The schema a key of an object is checked against: its property, else the map's value schema. */
export function fieldSchema(node: SchemaNode, key: string): SchemaNode | undefined {
  const property = node.properties?.get(key);
  if (property) return property;
  return node.additionalProperties === true ? undefined : node.additionalProperties;
}
