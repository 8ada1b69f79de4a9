// Loads the configuration: defaults < YAML file < ROLLGATE_* environment < command-line overrides.
import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from './config-error.ts';
import { configSchema, type RollgateConfig } from './schema.ts';

export interface LoadConfigOptions {
  /** A YAML file; missing means defaults only. */
  file?: string;
  /** The environment to read ROLLGATE_* variables from; defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** Values from command-line flags by dotted path (`server.port`); strings are parsed by the key's type. */
  overrides?: Record<string, unknown>;
}

type LeafType = 'string' | 'number' | 'boolean' | 'json';

/** A configurable value: its path in the config object and the env variable that sets it. */
export interface ConfigKey {
  path: string[];
  env: string;
  type: LeafType;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  for (;;) {
    const def = (current as unknown as { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } }).def;
    if (
      (def.type === 'default' ||
        def.type === 'prefault' ||
        def.type === 'optional' ||
        def.type === 'nullable') &&
      def.innerType
    ) {
      current = def.innerType;
    } else if (def.type === 'pipe' && def.in) {
      current = def.in;
    } else {
      return current;
    }
  }
}

function leafType(schema: z.ZodType): LeafType {
  const type = (unwrap(schema) as unknown as { def: { type: string } }).def.type;
  if (type === 'number') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'string' || type === 'enum') return 'string';
  return 'json';
}

const envSegment = (key: string): string => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Every key that the environment can set, derived from the schema so the two never disagree. */
export function configKeys(): ConfigKey[] {
  const keys: ConfigKey[] = [];
  const walk = (schema: z.ZodType, path: string[]): void => {
    const inner = unwrap(schema);
    if (inner instanceof z.ZodObject) {
      for (const [key, child] of Object.entries(inner.shape as Record<string, z.ZodType>))
        walk(child, [...path, key]);
      return;
    }
    keys.push({ path, env: ['ROLLGATE', ...path.map(envSegment)].join('_'), type: leafType(inner) });
  };
  walk(configSchema, []);
  return keys;
}

function parseValue(raw: unknown, type: LeafType, origin: string, path: string): unknown {
  if (typeof raw !== 'string') return raw;
  switch (type) {
    case 'string':
      return raw;
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n))
        throw new ConfigError([{ path, origin, message: `expected a number, got "${raw}"` }]);
      return n;
    }
    case 'boolean':
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw new ConfigError([{ path, origin, message: `expected true or false, got "${raw}"` }]);
    case 'json':
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw new ConfigError([{ path, origin, message: 'expected JSON' }]);
      }
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

const dotted = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');

function yamlLocation(
  doc: ReturnType<typeof parseDocument>,
  counter: LineCounter,
  path: ReadonlyArray<PropertyKey>,
): string | undefined {
  let node: unknown = doc.contents;
  let located: YamlNode | undefined = doc.contents ?? undefined;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => (item.key as { value?: unknown } | null)?.value === key);
      if (!pair) break;
      located = (pair.key as YamlNode | null) ?? located;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key];
      located = (node as YamlNode | undefined) ?? located;
    } else {
      break;
    }
  }
  const offset = located?.range?.[0];
  if (offset === undefined) return undefined;
  const { line, col } = counter.linePos(offset);
  return `${line}:${col}`;
}

/** Loads and validates the configuration, or throws a ConfigError naming every bad key. */
export function loadConfig(options: LoadConfigOptions = {}): RollgateConfig {
  const env = options.env ?? process.env;
  const raw: Record<string, unknown> = {};
  const origins = new Map<string, string>();
  let fileDoc: { doc: ReturnType<typeof parseDocument>; counter: LineCounter } | undefined;

  if (options.file) {
    let text: string;
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (err) {
      throw new ConfigError([
        { path: '', origin: options.file, message: `cannot read: ${(err as Error).message}` },
      ]);
    }
    const counter = new LineCounter();
    const doc = parseDocument(text, { lineCounter: counter });
    if (doc.errors.length > 0) {
      throw new ConfigError(
        doc.errors.map((e) => ({
          path: '',
          origin: `${options.file}:${e.linePos?.[0].line ?? 0}:${e.linePos?.[0].col ?? 0}`,
          message: e.message.split('\n')[0] ?? e.message,
        })),
      );
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) {
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ConfigError([
          { path: '', origin: options.file, message: 'the file must hold a mapping of settings' },
        ]);
      }
      Object.assign(raw, value);
    }
    fileDoc = { doc, counter };
  }

  for (const key of configKeys()) {
    const value = env[key.env];
    if (value === undefined) continue;
    const path = key.path.join('.');
    setPath(raw, key.path, parseValue(value, key.type, `env ${key.env}`, path));
    origins.set(path, `env ${key.env}`);
  }

  const keysByPath = new Map(configKeys().map((k) => [k.path.join('.'), k]));
  for (const [path, value] of Object.entries(options.overrides ?? {})) {
    if (value === undefined) continue;
    const key = keysByPath.get(path);
    if (!key) {
      throw new ConfigError([
        {
          path,
          origin: 'command line',
          message: `unknown setting (known: ${[...keysByPath.keys()].join(', ')})`,
        },
      ]);
    }
    setPath(raw, key.path, parseValue(value, key.type, 'command line', path));
    origins.set(path, 'command line');
  }

  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems: ConfigProblem[] = result.error.issues.map((issue) => {
    const path = dotted(issue.path);
    const fromOverride = [...origins.entries()].find(
      ([p]) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`),
    );
    let origin = fromOverride?.[1];
    if (!origin && fileDoc && options.file) {
      const at = yamlLocation(fileDoc.doc, fileDoc.counter, issue.path);
      origin = at ? `${options.file}:${at}` : options.file;
    }
    return { path, message: issue.message, ...(origin ? { origin } : {}) };
  });
  throw new ConfigError(problems);
}
