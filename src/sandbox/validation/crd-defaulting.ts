// Schema defaults (`default:`) applied to custom resources on write, as kube-apiserver's structural defaulting does.
import { isPlainObject } from '../controllers/kube-object.ts';
import { fieldSchema, type SchemaNode } from './crd-schema.ts';

/**
 * Sets each absent (or non-nullable null) property that has a `default` to a copy of it, then descends,
 * so defaults inside a defaulted object apply too (Gateway API's `matches: [{path: {type, value}}]`).
 */
export function applySchemaDefaults(value: unknown, node: SchemaNode | undefined): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) applySchemaDefaults(item, node.items);
    return;
  }
  if (!isPlainObject(value)) return;
  if (node.properties) {
    for (const [key, property] of node.properties) {
      if (!property.hasDefault) continue;
      const current = value[key];
      if (current === undefined || (current === null && !property.nullable)) {
        value[key] = structuredClone(property.default);
      }
    }
  }
  for (const key of Object.keys(value)) applySchemaDefaults(value[key], fieldSchema(node, key));
}
