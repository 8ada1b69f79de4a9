// The object formats of -o (json, yaml, name): API objects printed as kubectl prints them.
import { stringify } from 'yaml';
import type { ObjectFormat } from './output-format.ts';

/** An API object as read: what the object formats need of it. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; managedFields?: unknown };
  [field: string]: unknown;
}

/** How objects are printed. */
export interface ObjectPrintOptions {
  showManagedFields?: boolean;
}

/** kubectl's `-o name`: `kind.group/name`, the kind lower-cased, no group for the core API (`pod/web`). */
export function resourceName(object: ApiObject): string {
  const apiVersion = object.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = (object.kind ?? '').toLowerCase();
  return `${group === '' ? kind : `${kind}.${group}`}/${object.metadata?.name ?? ''}`;
}

/** The object as printed: keys sorted at every depth (as kubectl prints custom resources), managedFields out unless asked. */
function printable(object: ApiObject, options: ObjectPrintOptions): unknown {
  const shown =
    options.showManagedFields || object.metadata?.managedFields === undefined
      ? object
      : { ...object, metadata: withoutManagedFields(object.metadata) };
  return sortedKeys(shown);
}

function withoutManagedFields(metadata: NonNullable<ApiObject['metadata']>): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...metadata };
  delete rest.managedFields;
  return rest;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

function serialise(value: unknown, format: 'json' | 'yaml'): string {
  // As kubectl prints: JSON indented by four spaces; YAML with sequences flush under their key, no long
  // string folded, and every string a YAML 1.1 reader would take for something else quoted ("yes", a date).
  return format === 'json'
    ? `${JSON.stringify(value, null, 4)}\n`
    : stringify(value, { lineWidth: 0, indentSeq: false, version: '1.1' });
}

/** One object (`get`): the object itself, or its name. */
export function formatObject(
  object: ApiObject,
  format: ObjectFormat,
  options: ObjectPrintOptions = {},
): string {
  if (format === 'name') return `${resourceName(object)}\n`;
  return serialise(printable(object, options), format);
}

/**
 * Several objects (`list`, or `get` of a kind): kubectl's `List` (apiVersion v1, kind List), each item with
 * its apiVersion and kind, or one name a line.
 */
export function formatObjectList(
  objects: readonly ApiObject[],
  format: ObjectFormat,
  options: ObjectPrintOptions = {},
): string {
  if (format === 'name') return objects.map((object) => `${resourceName(object)}\n`).join('');
  return serialise(
    {
      apiVersion: 'v1',
      items: objects.map((object) => printable(object, options)),
      kind: 'List',
      metadata: { resourceVersion: '' },
    },
    format,
  );
}
