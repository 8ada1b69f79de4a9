// Pruning of custom resources as kube-apiserver does it for structural schemas: unknown fields and stray nulls.
import { isPlainObject } from '../controllers/kube-object.ts';
import { fieldSchema, type SchemaNode } from './crd-schema.ts';

/** Fields kube-apiserver keeps at an object's root (and in embedded resources) whatever the schema says. */
const RESOURCE_META = new Set(['apiVersion', 'kind', 'metadata']);

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function pruneValue(value: unknown, node: SchemaNode, path: string, pruned: string[]): void {
  if (Array.isArray(value)) {
    if (node.items)
      value.forEach((item, i) => pruneValue(item, node.items as SchemaNode, `${path}[${i}]`, pruned));
    return;
  }
  if (isPlainObject(value)) pruneObject(value, node, path, pruned, node.embeddedResource);
}

function pruneObject(
  obj: Record<string, unknown>,
  node: SchemaNode,
  path: string,
  pruned: string[],
  resourceRoot: boolean,
): void {
  for (const key of Object.keys(obj)) {
    if (resourceRoot && RESOURCE_META.has(key)) continue;
    const schema = fieldSchema(node, key);
    if (schema) pruneValue(obj[key], schema, childPath(path, key), pruned);
    else if (!node.preserveUnknownFields && node.additionalProperties !== true) {
      delete obj[key];
      pruned.push(childPath(path, key));
    }
  }
}

/**
 * Drops every field the schema does not declare (unless `x-kubernetes-preserve-unknown-fields` or a map
 * keeps it), in place, and returns the dropped paths (`spec.rules[0].foo`) for `fieldValidation`.
 */
export function pruneUnknownFields(obj: Record<string, unknown>, root: SchemaNode): string[] {
  const pruned: string[] = [];
  pruneObject(obj, root, '', pruned, true);
  return pruned;
}

/**
 * Removes `null` values of fields that are neither nullable nor defaulted, as the API server does before
 * defaulting (a null with a default gets the default; a null in a list stays and fails the type check).
 */
export function pruneNonNullableNulls(value: unknown, node: SchemaNode | undefined): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) pruneNonNullableNulls(item, node.items);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key of Object.keys(value)) {
    const schema = fieldSchema(node, key);
    if (value[key] === null && schema && !schema.nullable && !schema.hasDefault) delete value[key];
    else pruneNonNullableNulls(value[key], schema);
  }
}
