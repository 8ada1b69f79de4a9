// Turns one manifest file's text into keyed Kubernetes objects plus per-object problems with lines.
import { parseManifests } from '../spec/manifest.ts';
import { isValidatedKind, validateObject } from '../spec/validate.ts';

/** One Kubernetes object found in a manifest file of a source. */
export interface SourceManifest {
  /** `kind/namespace/name` (namespace empty when the manifest sets none): the identity diffs compare by. */
  key: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
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

/**
 * The parser sources use: the spec module's multi-document YAML parser (positions, alias and size bounds)
 * and, for the kinds Rollgate validates (Rollout, AnalysisTemplate, ClusterAnalysisTemplate,
 * AnalysisRun), its validator. Every other kind needs only apiVersion, kind and metadata.name.
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
      if (object.name === undefined || object.name === '') {
        result.problems.push({
          file,
          line,
          column: col,
          message: `${object.kind}: metadata.name is required`,
        });
        continue;
      }
      const key = manifestKey(object.kind, object.namespace || undefined, object.name);
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
            message: `${object.kind}/${object.name}: ${where}${first.message}${more}`,
          });
          continue;
        }
      }
      const manifest: SourceManifest = {
        key,
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.name,
        object: object.value,
        line,
      };
      if (object.namespace) manifest.namespace = object.namespace;
      result.objects.push(manifest);
    }
    result.problems.sort((a, b) => a.line - b.line);
    return result;
  },
};
