// `-o, --output` of every get and list verb, as kubectl names the formats (the printing is print-objects.ts,
// loaded only when a verb runs: --help never pays for the YAML library).
import { Option } from 'commander';

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
