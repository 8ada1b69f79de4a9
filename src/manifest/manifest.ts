// Multi-document YAML → Kubernetes objects, keeping the line and column of every object and field.
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import type { FieldPath } from './field-path.ts';
import { ManifestLimitError } from './manifest-limit-error.ts';
import { ManifestSyntaxError } from './manifest-syntax-error.ts';

export type { FieldPath } from './field-path.ts';
export { formatFieldPath } from './field-path.ts';
export { ManifestLimitError } from './manifest-limit-error.ts';
export { ManifestSyntaxError } from './manifest-syntax-error.ts';

/** 1-based line and column in a file. */
export interface SourcePosition {
  line: number;
  col: number;
}

/** One Kubernetes object (a YAML document with apiVersion and kind) and where it came from. */
export interface ManifestObject {
  file: string;
  /** 0-based index of the document within the file. */
  documentIndex: number;
  /** Where the object starts (its first key). */
  position: SourcePosition;
  apiVersion: string;
  kind: string;
  /** metadata.name, when it is a string. */
  name: string | undefined;
  /** metadata.generateName, when it is a string (the prefix of a name the API server completes). */
  generateName: string | undefined;
  /** metadata.namespace, when it is a string. */
  namespace: string | undefined;
  /** The document as plain data (aliases expanded). */
  value: Record<string, unknown>;
  /**
   * Where a field is written. For a field that is absent, the position of its nearest written
   * ancestor (so "spec.selector: required" points at `spec:`).
   */
  lineOf(path: FieldPath): SourcePosition;
}

/** A document that is not a Kubernetes object (no apiVersion/kind), skipped with a note. */
export interface SkippedDocument {
  file: string;
  documentIndex: number;
  position: SourcePosition;
  reason: string;
}

export interface ParsedManifests {
  file: string;
  objects: ManifestObject[];
  skipped: SkippedDocument[];
  /** Documents that could not be read; the file's other documents are still returned. */
  errors: Array<ManifestSyntaxError | ManifestLimitError>;
}

export interface ParseManifestsOptions {
  /**
   * Most alias expansions allowed per document (the `yaml` library's maxAliasCount; default 100).
   * An alias bomb exceeds it within milliseconds and the document is refused.
   */
  maxAliasCount?: number;
  /** Largest file accepted, in UTF-16 code units (default 8 MiB). */
  maxBytes?: number;
}

/** Default bounds applied by {@link parseManifests}. */
export const MANIFEST_LIMITS = { maxAliasCount: 100, maxBytes: 8 * 1024 * 1024 } as const;

/**
 * Parses a multi-document YAML file. Every document that is a mapping with string `apiVersion` and
 * `kind` becomes a {@link ManifestObject}; empty documents are ignored; any other document is
 * skipped with a note. Invalid YAML and documents over the alias bound are reported in `errors` with
 * file:line:col, without stopping the other documents.
 */
export function parseManifests(
  text: string,
  file: string,
  options: ParseManifestsOptions = {},
): ParsedManifests {
  const maxAliasCount = options.maxAliasCount ?? MANIFEST_LIMITS.maxAliasCount;
  const maxBytes = options.maxBytes ?? MANIFEST_LIMITS.maxBytes;
  const result: ParsedManifests = { file, objects: [], skipped: [], errors: [] };
  if (text.length > maxBytes) {
    result.errors.push(
      new ManifestLimitError(
        file,
        1,
        1,
        0,
        `file is ${text.length} bytes, more than the ${maxBytes} allowed`,
      ),
    );
    return result;
  }
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, {
    lineCounter,
    uniqueKeys: true,
    merge: true,
    logLevel: 'error',
  });
  // parseAllDocuments returns an EmptyStream (an array with no documents) for empty input.
  documents.forEach((doc, documentIndex) => {
    const at = (offset: number | undefined): SourcePosition => lineCounter.linePos(offset ?? 0);
    const firstError = doc.errors[0];
    if (firstError !== undefined) {
      const pos = firstError.linePos?.[0] ?? at(firstError.pos[0]);
      result.errors.push(
        new ManifestSyntaxError(file, pos.line, pos.col, documentIndex, cleanReason(firstError.message)),
      );
      return;
    }
    const contents = doc.contents;
    const position = at(contents?.range?.[0] ?? doc.range[0]);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount });
    } catch (err) {
      if (err instanceof ReferenceError && /alias/i.test(err.message)) {
        result.errors.push(
          new ManifestLimitError(
            file,
            position.line,
            position.col,
            documentIndex,
            `alias expansion exceeds ${maxAliasCount} (a YAML alias bomb?)`,
          ),
        );
      } else {
        const reason = err instanceof Error ? err.message : String(err);
        result.errors.push(new ManifestSyntaxError(file, position.line, position.col, documentIndex, reason));
      }
      return;
    }
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || Array.isArray(value)) {
      result.skipped.push({
        file,
        documentIndex,
        position,
        reason: 'not a Kubernetes object (not a mapping)',
      });
      return;
    }
    const record = value as Record<string, unknown>;
    const { apiVersion, kind } = record;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      result.skipped.push({
        file,
        documentIndex,
        position,
        reason: 'not a Kubernetes object (no apiVersion/kind)',
      });
      return;
    }
    const metadata = record['metadata'];
    const meta =
      typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : {};
    result.objects.push({
      file,
      documentIndex,
      position,
      apiVersion,
      kind,
      name: typeof meta['name'] === 'string' ? meta['name'] : undefined,
      generateName: typeof meta['generateName'] === 'string' ? meta['generateName'] : undefined,
      namespace: typeof meta['namespace'] === 'string' ? meta['namespace'] : undefined,
      value: record,
      lineOf: (path) => at(offsetOf(doc, path)),
    });
  });
  return result;
}

// The library's messages end with " at line L, column C:" plus a code excerpt; we print file:line:col
// ourselves, so keep only the first sentence.
function cleanReason(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, '').trim();
}

function offsetOf(doc: Document.Parsed, path: FieldPath): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? doc.range[0];
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item: unknown = node.items[segment];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  if (node === null || typeof node !== 'object' || !('range' in node)) return undefined;
  const range = (node as YamlNode).range;
  return range?.[0];
}
