// Turns one manifest file's text into keyed Kubernetes objects plus per-object problems with lines.
import { LineCounter, parseAllDocuments } from 'yaml';

/** One Kubernetes object found in a manifest file. */
export interface ManifestObject {
  /** `kind/namespace/name` (namespace empty when the manifest sets none): the identity diffs compare by. */
  key: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The parsed document, as plain JSON-compatible data. */
  object: Record<string, unknown>;
  /** 1-based line where the document starts. */
  line: number;
}

/** A document that could not be used: invalid YAML, or not a valid object. */
export interface ManifestProblem {
  file: string;
  line: number;
  column: number;
  message: string;
  /** The object's key when it could be read despite the problem. */
  key?: string;
}

/** What a manifest file holds. */
export interface ManifestFile {
  objects: ManifestObject[];
  problems: ManifestProblem[];
}

/**
 * Parses and validates manifest files. The spec module's parser/validator plugs in here; the default
 * ({@link yamlManifestParser}) only checks what a diff needs: YAML syntax and apiVersion/kind/metadata.name.
 */
export interface ManifestParser {
  parse(file: string, text: string): ManifestFile;
}

/** Builds the identity key of an object. */
export function manifestKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Refuses alias bombs: a few aliases are normal, thousands are an attack. */
const MAX_ALIAS_COUNT = 100;

/**
 * The default parser: multi-document YAML with `yaml`, one problem per unusable document (with its line),
 * every other document kept. Empty documents and documents with neither apiVersion nor kind (non-Kubernetes
 * YAML) are ignored.
 */
export const yamlManifestParser: ManifestParser = {
  parse(file, text) {
    const lineCounter = new LineCounter();
    const result: ManifestFile = { objects: [], problems: [] };
    const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
    const list = Array.isArray(documents) ? documents : [];
    for (const document of list) {
      const start = lineCounter.linePos(document.contents?.range[0] ?? document.range[0]);
      if (document.errors.length > 0) {
        const first = document.errors[0];
        const at = first ? lineCounter.linePos(first.pos[0]) : start;
        result.problems.push({
          file,
          line: at.line,
          column: at.col,
          message: `invalid YAML in the document starting at line ${start.line}: ${first?.message.split('\n')[0] ?? 'unreadable document'}`,
        });
        continue;
      }
      let value: unknown;
      try {
        value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      } catch (error) {
        result.problems.push({
          file,
          line: start.line,
          column: start.col,
          message: `invalid YAML: ${String(error)}`,
        });
        continue;
      }
      if (value === null || value === undefined) continue;
      if (!isRecord(value)) {
        result.problems.push({
          file,
          line: start.line,
          column: start.col,
          message: 'a manifest must be a mapping',
        });
        continue;
      }
      if (value.apiVersion === undefined && value.kind === undefined) continue;
      const metadata = isRecord(value.metadata) ? value.metadata : {};
      const { apiVersion, kind } = value;
      const { name, namespace } = metadata;
      const missing: string[] = [];
      if (typeof apiVersion !== 'string' || apiVersion === '') missing.push('apiVersion');
      if (typeof kind !== 'string' || kind === '') missing.push('kind');
      if (typeof name !== 'string' || name === '') missing.push('metadata.name');
      if (namespace !== undefined && typeof namespace !== 'string') missing.push('metadata.namespace');
      if (
        missing.length > 0 ||
        typeof apiVersion !== 'string' ||
        typeof kind !== 'string' ||
        typeof name !== 'string'
      ) {
        result.problems.push({
          file,
          line: start.line,
          column: start.col,
          message: `missing or invalid ${missing.join(', ')}`,
        });
        continue;
      }
      const ns = typeof namespace === 'string' && namespace !== '' ? namespace : undefined;
      const object: ManifestObject = {
        key: manifestKey(kind, ns, name),
        apiVersion,
        kind,
        name,
        object: value,
        line: start.line,
      };
      if (ns !== undefined) object.namespace = ns;
      result.objects.push(object);
    }
    return result;
  },
};
