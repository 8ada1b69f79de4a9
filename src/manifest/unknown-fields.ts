// Finds fields a schema does not define (typos such as `progresDeadlineSeconds`), which would otherwise vanish silently.
import { z } from 'zod';
import type { FieldPath } from './field-path.ts';

type JsonSchema = { [key: string]: unknown };

const cache = new WeakMap<z.ZodType, JsonSchema>();

function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  let json = cache.get(schema);
  if (json === undefined) {
    json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    cache.set(schema, json);
  }
  return json;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walk(schema: JsonSchema, value: unknown, path: Array<string | number>, found: FieldPath[]): void {
  if (isRecord(value) && schema['type'] === 'object') {
    const properties = isRecord(schema['properties']) ? schema['properties'] : undefined;
    const additional = schema['additionalProperties'];
    // A strict object lists every field it knows; a loose one (additionalProperties: {}) keeps the rest.
    const closed = properties !== undefined && additional === undefined;
    for (const [key, child] of Object.entries(value)) {
      const known = properties?.[key];
      if (isRecord(known)) walk(known, child, [...path, key], found);
      else if (closed) found.push([...path, key]);
      else if (isRecord(additional) && Object.keys(additional).length > 0)
        walk(additional, child, [...path, key], found);
    }
  } else if (Array.isArray(value) && schema['type'] === 'array' && isRecord(schema['items'])) {
    const items = schema['items'];
    value.forEach((item, index) => walk(items, item, [...path, index], found));
  }
}

/**
 * Paths of fields in `value` that `schema` does not define, skipping the parts the schema keeps
 * open (pod template, metadata, provider-specific blocks). Call it on values the schema accepted.
 */
export function unknownFields(schema: z.ZodType, value: unknown): FieldPath[] {
  const found: FieldPath[] = [];
  walk(jsonSchemaOf(schema), value, [], found);
  return found;
}
