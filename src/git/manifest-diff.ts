// Turns changed manifest files into per-object changes (added / changed / removed) keyed by kind/namespace/name.
import type { ManifestFile, ManifestParser, ManifestProblem, SourceManifest } from './manifest-parser.ts';
import type { FileChange } from './tree-diff.ts';

/** An object that appeared in Git. */
export interface ManifestAdded {
  change: 'added';
  key: string;
  /** File (repository path) and line the object is defined at now. */
  file: string;
  line: number;
  object: SourceManifest;
}

/** An object whose parsed content differs (formatting and comments do not count). */
export interface ManifestChanged {
  change: 'changed';
  key: string;
  file: string;
  line: number;
  object: SourceManifest;
  previous: SourceManifest;
  /** Set when the object also moved to another file. */
  previousFile?: string;
}

/** An object that left Git. Never reported for an object whose file is now invalid (it is held instead). */
export interface ManifestRemoved {
  change: 'removed';
  key: string;
  /** The file it was defined in before. */
  file: string;
  previous: SourceManifest;
}

/** One object-level change between two commits of a source. */
export type ManifestChange = ManifestAdded | ManifestChanged | ManifestRemoved;

/** The object-level result of a diff. */
export interface ManifestDiff {
  changes: ManifestChange[];
  /** Documents that could not be used (invalid YAML, invalid objects, duplicates); each skipped. */
  problems: ManifestProblem[];
}

/** Structural equality of JSON-compatible values (key order does not matter). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every(
    (key) => Object.prototype.hasOwnProperty.call(right, key) && sameValue(left[key], right[key]),
  );
}

interface Located {
  file: string;
  object: SourceManifest;
}

/** A changed file's two versions, parsed (absent: the file is not there on that side). */
export interface ParsedFileChange {
  path: string;
  before?: ManifestFile;
  after?: ManifestFile;
}

/** A changed file's versions as text, parsed (absent: the file is not there on that side). */
export function parseFileChange(
  file: {
    path: string;
    before?: string;
    after?: string;
    problems?: ReadonlyArray<{ file: string; line: number; message: string }>;
  },
  parser: ManifestParser,
): ParsedFileChange {
  const entry: ParsedFileChange = { path: file.path };
  if (file.before !== undefined) entry.before = parser.parse(file.path, file.before);
  if (file.problems !== undefined && file.problems.length > 0)
    entry.after = { objects: [], problems: file.problems.map((problem) => ({ ...problem, column: 1 })) };
  else if (file.after !== undefined) entry.after = parser.parse(file.path, file.after);
  return entry;
}

/**
 * Compares the objects of the changed files' old and new versions. Objects are matched by key across
 * all changed files, so moving an object to another file is not a removal plus an addition.
 *
 * Safety rules: when a file's new version has any unusable document, objects that file used to define
 * and that are no longer found are held (not reported removed), because an invalid edit must never
 * prune what runs. An object that fails validation is reported as a problem and is neither added,
 * changed nor removed.
 */
export async function diffManifests(
  files: FileChange[],
  readBlob: (oid: string) => Promise<Uint8Array>,
  parser: ManifestParser,
): Promise<ManifestDiff> {
  const decoder = new TextDecoder('utf-8');
  const text = async (oid: string | undefined) =>
    oid === undefined ? undefined : decoder.decode(await readBlob(oid));
  const parsed: ParsedFileChange[] = [];
  for (const file of files) {
    const versions = { path: file.path, before: await text(file.before), after: await text(file.after) };
    parsed.push(parseFileChange(versions, parser));
  }
  return compareManifests(parsed);
}

/**
 * {@link diffManifests} of files already parsed. Keys are matched across the files given only: a caller
 * that compares a commit's files in parts keeps every file that may define a key in the same part.
 */
export function compareManifests(files: readonly ParsedFileChange[]): ManifestDiff {
  const before = new Map<string, Located>();
  const after = new Map<string, Located>();
  const problems: ManifestProblem[] = [];
  const filesWithProblems = new Set<string>();
  const heldKeys = new Set<string>();

  for (const file of files) {
    if (file.before !== undefined) {
      // Problems of the old version were reported when it was new; only its valid objects ever ran.
      for (const object of file.before.objects) before.set(object.key, { file: file.path, object });
    }
    if (file.after !== undefined) {
      for (const problem of file.after.problems) {
        problems.push(problem);
        filesWithProblems.add(file.path);
        if (problem.key !== undefined) heldKeys.add(problem.key);
      }
      for (const object of file.after.objects) {
        const seen = after.get(object.key);
        if (seen) {
          problems.push({
            file: file.path,
            line: object.line,
            column: 1,
            key: object.key,
            message: `duplicate object ${object.key} (first defined at ${seen.file}:${seen.object.line})`,
          });
          continue;
        }
        after.set(object.key, { file: file.path, object });
      }
    }
  }

  const changes: ManifestChange[] = [];
  for (const [key, now] of after) {
    if (heldKeys.has(key)) continue;
    const was = before.get(key);
    if (!was) {
      changes.push({ change: 'added', key, file: now.file, line: now.object.line, object: now.object });
    } else if (!sameValue(was.object.object, now.object.object)) {
      const change: ManifestChanged = {
        change: 'changed',
        key,
        file: now.file,
        line: now.object.line,
        object: now.object,
        previous: was.object,
      };
      if (was.file !== now.file) change.previousFile = was.file;
      changes.push(change);
    }
  }
  for (const [key, was] of before) {
    if (after.has(key) || heldKeys.has(key) || filesWithProblems.has(was.file)) continue;
    changes.push({ change: 'removed', key, file: was.file, previous: was.object });
  }
  sortDiff({ changes, problems });
  return { changes, problems };
}

/** The order a diff reports in: by file, then line (so two parts of one diff merge into the same order). */
export function sortDiff(diff: ManifestDiff): ManifestDiff {
  diff.changes.sort(
    (a, b) => a.file.localeCompare(b.file) || lineOf(a) - lineOf(b) || a.key.localeCompare(b.key),
  );
  diff.problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return diff;
}

function lineOf(change: ManifestChange): number {
  return change.change === 'removed' ? change.previous.line : change.line;
}
