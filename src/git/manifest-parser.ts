// Turns one manifest file's text into keyed Kubernetes objects plus per-object problems with lines.
import { createHash } from 'node:crypto';
import { parseManifests } from '../manifest/manifest.ts';
import { isValidatedKind, validateObject } from '../manifest/validate.ts';

/** One Kubernetes object found in a manifest file of a source. */
export interface SourceManifest {
  /**
   * `kind/namespace/name` (namespace empty when the manifest sets none): the identity diffs compare by.
   * An object with only generateName has `kind/namespace/generateName#digest` (see {@link generatedManifestKey}).
   */
  key: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** metadata.name; absent for an object Git names only by generateName. */
  name?: string;
  /** metadata.generateName of an object without a name: it is created, never applied or pruned by name. */
  generateName?: string;
  /** The parsed document, as plain JSON-compatible data (aliases expanded). */
  object: Record<string, unknown>;
  /** 1-based line where the object starts. */
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
  objects: SourceManifest[];
  problems: ManifestProblem[];
}

/** Parses and validates manifest files; {@link specManifestParser} is the one sources use. */
export interface ManifestParser {
  parse(file: string, text: string): ManifestFile;
}

/** Builds the identity key of an object. */
export function manifestKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

// JSON with object keys sorted, so that key order in the YAML does not change a digest.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The identity of a document's content: a sha256 of the parsed object (comments, formatting and key
 * order do not count), 40 hex characters so that it fits a label value. An object with only
 * generateName is known by it: it is what the key of such an object ends with, and the label its
 * created instances carry.
 */
export function manifestDigest(object: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(object)).digest('hex').slice(0, 40);
}

/** The key of an object with only generateName: its prefix and the start of its content digest. */
export function generatedManifestKey(
  kind: string,
  namespace: string | undefined,
  generateName: string,
  digest: string,
): string {
  return `${kind}/${namespace ?? ''}/${generateName}#${digest.slice(0, 12)}`;
}

/**
 * The parser sources use: the spec module's multi-document YAML parser (positions, alias and size bounds)
 * and, for the kinds Rollgate validates (Rollout, AnalysisTemplate, ClusterAnalysisTemplate,
 * AnalysisRun), its validator. Every other kind needs only apiVersion, kind and metadata.name, or
 * metadata.generateName (an object created under a generated name, keyed by its content).
 * Documents that are not Kubernetes objects (no apiVersion/kind) are ignored; each unusable document is
 * one problem with its line, and the file's other documents are kept.
 */
export const specManifestParser: ManifestParser = {
  parse(file, text) {
    const parsed = parseManifests(text, file);
    const result: ManifestFile = { objects: [], problems: [] };
    for (const error of parsed.errors) {
      result.problems.push({
        file,
        line: error.line,
        column: error.col,
        message: error.message.replace(`${file}:${error.line}:${error.col}: `, ''),
      });
    }
    for (const object of parsed.objects) {
      const { line, col } = object.position;
      const name = object.name || undefined;
      const generateName = object.generateName || undefined;
      const namespace = object.namespace || undefined;
      let key: string;
      if (name !== undefined) key = manifestKey(object.kind, namespace, name);
      else if (generateName !== undefined)
        key = generatedManifestKey(object.kind, namespace, generateName, manifestDigest(object.value));
      else {
        result.problems.push({
          file,
          line,
          column: col,
          message: `${object.kind}: metadata.name is required`,
        });
        continue;
      }
      if (isValidatedKind(object)) {
        const validation = validateObject(object);
        const first = validation.errors[0];
        if (first !== undefined) {
          const more = validation.errors.length > 1 ? ` (and ${validation.errors.length - 1} more)` : '';
          const where = first.path === '' ? '' : `${first.path}: `;
          result.problems.push({
            file,
            line: first.line,
            column: first.col,
            key,
            message: `${object.kind}/${name ?? `${generateName ?? ''}*`}: ${where}${first.message}${more}`,
          });
          continue;
        }
      }
      const manifest: SourceManifest = {
        key,
        apiVersion: object.apiVersion,
        kind: object.kind,
        ...(name !== undefined ? { name } : { generateName }),
        object: object.value,
        line,
      };
      if (namespace) manifest.namespace = namespace;
      result.objects.push(manifest);
    }
    result.problems.sort((a, b) => a.line - b.line);
    return result;
  },
};
