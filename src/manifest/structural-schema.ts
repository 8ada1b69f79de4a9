// JSON Schema (from z.toJSONSchema) → a Kubernetes structural OpenAPI v3 schema, as CRDs require.

/** A JSON/OpenAPI schema node (loosely typed: it comes from z.toJSONSchema). */
export type SchemaNode = { [key: string]: unknown };

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
// Keywords a structural schema may keep as they are.
const KEPT = [
  'type',
  'format',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'required',
  'description',
  'nullable',
];

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(options: SchemaNode[]): Set<string> {
  return new Set(options.map((option) => (typeof option['type'] === 'string' ? option['type'] : 'any')));
}

/**
 * Converts one node. Kubernetes refuses `$ref`, and `anyOf`/`oneOf` whose branches declare types, so:
 * int|string (and number|string) unions become `x-kubernetes-int-or-string`, other unions and
 * free-form values become `x-kubernetes-preserve-unknown-fields`, loose objects keep their known
 * properties and preserve the rest, and maps keep `additionalProperties` with a converted schema.
 */
export function toStructuralSchema(node: SchemaNode): SchemaNode {
  if (node['$ref'] !== undefined) throw new Error(`unexpected $ref in CRD schema: ${String(node['$ref'])}`);
  const union = (node['anyOf'] ?? node['oneOf']) as SchemaNode[] | undefined;
  if (Array.isArray(union)) {
    const types = typesOf(union);
    const scalarOnly = [...types].every(
      (type) => type === 'integer' || type === 'number' || type === 'string',
    );
    if (scalarOnly && types.has('string') && types.size === 2) return { 'x-kubernetes-int-or-string': true };
    if (types.size === 1 && types.has('string')) return { type: 'string' };
    return { 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: SchemaNode = {};
  for (const key of KEPT) if (node[key] !== undefined) out[key] = node[key];
  // z.int() bounds itself to the safe-integer range; that is an implementation limit, not a rule.
  if (out['minimum'] === -MAX_SAFE) delete out['minimum'];
  if (out['maximum'] === MAX_SAFE) delete out['maximum'];
  if (out['type'] === 'integer') out['format'] = 'int64';

  if (node['type'] === undefined && node['enum'] === undefined) {
    return { 'x-kubernetes-preserve-unknown-fields': true };
  }
  if (node['type'] === 'object') {
    const properties = isNode(node['properties']) ? node['properties'] : undefined;
    const additional = node['additionalProperties'];
    if (properties !== undefined) {
      out['properties'] = Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, toStructuralSchema(value as SchemaNode)]),
      );
      // A loose object: additionalProperties {} / true → known fields checked, the rest kept.
      if (additional === true || (isNode(additional) && Object.keys(additional).length === 0)) {
        out['x-kubernetes-preserve-unknown-fields'] = true;
      }
    } else if (isNode(additional) && Object.keys(additional).length > 0) {
      out['additionalProperties'] = toStructuralSchema(additional);
    } else {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
    if (Array.isArray(out['required']) && out['required'].length === 0) delete out['required'];
  }
  if (node['type'] === 'array' && isNode(node['items'])) {
    out['items'] = toStructuralSchema(node['items']);
  }
  return out;
}
