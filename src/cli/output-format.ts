// `-o, --output` of every get and list verb, as kubectl names the formats, and the printing of API objects.
import { Option } from 'commander';
import { stringify } from 'yaml';

/**
 * The formats every get and list verb takes: its own table or tree (`text`, `wide` with more columns), or
 * the objects as the API server returns them (`json`, `yaml`), or their `kind.group/name` (`name`).
 */
export const OUTPUT_FORMATS = ['text', 'wide', 'json', 'yaml', 'name'] as const;

/** A format of {@link OUTPUT_FORMATS}; a verb may add its own names (see {@link outputOption}). */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * A verb's own JSON beside kubectl's formats: `view-json`, the document its text is drawn from (get rollout:
 * the tree, list rollouts: the rows), as the dashboard's API serves it. `-o json` is the API object.
 */
export const VIEW_JSON_FORMAT = {
  name: 'view-json',
  help: 'the JSON of what text shows',
} as const;

/** The formats of a verb that also offers {@link VIEW_JSON_FORMAT}. */
export type ViewOutputFormat = OutputFormat | typeof VIEW_JSON_FORMAT.name;

/** The formats that print API objects rather than the verb's own text. */
export type ObjectFormat = 'json' | 'yaml' | 'name';

/**
 * `-o, --output <format>`, default `text`. A name outside the list is refused by commander before the verb
 * runs (exit 2, naming the allowed formats). `extra` adds a verb's own formats after kubectl's.
 */
export function outputOption(extra: ReadonlyArray<{ name: string; help: string }> = []): Option {
  const own = extra.map((format) => `, ${format.name} (${format.help})`).join('');
  return new Option(
    '-o, --output <format>',
    `output format: text, wide (more columns), json or yaml (the objects as the API server returns them, a List for lists), name (kind.group/name)${own}`,
  )
    .choices([...OUTPUT_FORMATS, ...extra.map((format) => format.name)])
    .default('text');
}

/** `--show-managed-fields`: kubectl leaves metadata.managedFields out of json and yaml unless asked. */
export const SHOW_MANAGED_FIELDS_FLAG = '--show-managed-fields';
export const SHOW_MANAGED_FIELDS_HELP = 'with -o json|yaml, keep metadata.managedFields (left out otherwise)';

export function isObjectFormat(format: string): format is ObjectFormat {
  return format === 'json' || format === 'yaml' || format === 'name';
}

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
