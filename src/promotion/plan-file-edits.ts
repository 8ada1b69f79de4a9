// Which files of the target a promotion's `files` rewrite: whole files and folders copied byte for byte from the `from` tree.
import { FileMoveError } from './file-move-error.ts';
import type { PromotionFile } from './promotion-action.ts';

/** One configured move: a file or folder, relative to each source's path. */
export interface FileMove {
  from: string;
  to: string;
  /** The configuration key, for errors (`promotions[0].files[1]`). */
  key?: string;
}

/** A file of one side, its path relative to that source's path. */
export interface TreeFile {
  path: string;
  text: string;
}

/** What happens to one target path. */
export interface FileEdit {
  /** Relative to the `to` source's path. */
  path: string;
  change: 'added' | 'modified' | 'deleted';
}

/** The edits as the branch writer takes them (repository paths) and as the pull request lists them. */
export interface FileEditPlan {
  /** Files to write, repository paths (the `to` source's path joined). */
  files: PromotionFile[];
  /** Files to delete, repository paths. */
  deletions: string[];
  /** Every change, sorted by path, relative to the `to` source's path. */
  edits: FileEdit[];
  /**
   * What the moves want the target to hold (each path and its bytes, or its absence), as a digest: the same
   * `from` files give the same digest whatever the target holds, so a pull request remembers what it carries.
   */
  digest: string;
}

/** FNV-1a, 64 bits, of a string's UTF-16 code units: tells two file sets apart (not a security boundary). */
function digestOf(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/**
 * A path relative to a source's path, normalized (`./a//b/` → `a/b`); refused when it is empty or would
 * leave the source's path (absolute, `..` that climbs above it, a backslash that some tools read as one).
 */
export function sourceRelativePath(path: string, key?: string): string {
  const refuse = (why: string): never => {
    throw new FileMoveError('promotion.path_outside_source', `"${path}" ${why}`, {
      ...(key !== undefined ? { key } : {}),
      path,
    });
  };
  if (path.startsWith('/')) refuse('is absolute; give it relative to the source path');
  if (path.includes('\\')) refuse('contains a backslash; use /');
  if (path.includes('\0')) refuse('contains a NUL character');
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) refuse("leaves the source's path");
      parts.pop();
      continue;
    }
    // A `.git` component would write into a repository's own metadata on a checkout.
    if (part.toLowerCase() === '.git') refuse('names a .git folder');
    parts.push(part);
  }
  if (parts.length === 0) refuse("names the source's path itself; name a file or a folder in it");
  return parts.join('/');
}

function join(root: string, path: string): string {
  const base = root.replace(/^\.?\/+/, '').replace(/\/+$/, '');
  return base === '' || base === '.' ? path : `${base}/${path}`;
}

/** The files of `tree` at `path` (a file) or under it (a folder), keyed by their path below it ('' for the file). */
function at(
  tree: ReadonlyMap<string, string>,
  path: string,
): { kind: 'file' | 'folder' | 'none'; files: Map<string, string> } {
  const file = tree.get(path);
  const inside = new Map<string, string>();
  for (const [candidate, text] of tree)
    if (candidate.startsWith(`${path}/`)) inside.set(candidate.slice(path.length + 1), text);
  if (file !== undefined && inside.size > 0)
    // Git cannot hold both; a tree handed in that does is a caller's bug.
    throw new FileMoveError('promotion.path_kind_mismatch', `"${path}" is both a file and a folder`, {
      path,
    });
  if (file !== undefined) return { kind: 'file', files: new Map([['', file]]) };
  return { kind: inside.size > 0 ? 'folder' : 'none', files: inside };
}

/**
 * Plans the promotion's file moves: each `from` file (or every file of a `from` folder, nested ones too)
 * becomes the `to` file with exactly its bytes; a target file the `from` side no longer has (deleted in
 * staging, or absent from the folder) is deleted; a file already equal is left out. Pure: two trees in,
 * edits out. Paths in `from` and `to` are relative to each source's path; `fromRoot`/`toRoot` are those
 * paths, used only to write repository paths.
 */
export function planFileEdits(input: {
  moves: readonly FileMove[];
  from: readonly TreeFile[];
  to: readonly TreeFile[];
  toRoot: string;
}): FileEditPlan {
  const fromTree = new Map(input.from.map((file) => [file.path, file.text]));
  const toTree = new Map(input.to.map((file) => [file.path, file.text]));
  const wanted = new Map<string, string | undefined>(); // target path → text, undefined = delete
  const owner = new Map<string, string>();
  const claim = (path: string, text: string | undefined, key: string): void => {
    const earlier = owner.get(path);
    if (earlier !== undefined && earlier !== key)
      throw new FileMoveError('promotion.path_conflict', `"${path}" is also written by ${earlier}`, {
        key,
        path,
      });
    owner.set(path, key);
    wanted.set(path, text);
  };

  const carried: Array<[string, Array<[string, string]>]> = [];
  input.moves.forEach((move, index) => {
    const key = move.key ?? `files[${index}]`;
    const fromPath = sourceRelativePath(move.from, `${key}.from`);
    const toPath = sourceRelativePath(move.to, `${key}.to`);
    const source = at(fromTree, fromPath);
    const target = at(toTree, toPath);
    if (source.kind !== 'none' && target.kind !== 'none' && source.kind !== target.kind)
      throw new FileMoveError(
        'promotion.path_kind_mismatch',
        `"${fromPath}" is a ${source.kind} in the from source but "${toPath}" is a ${target.kind} in the target`,
        { key, path: toPath },
      );
    carried.push([toPath, [...source.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
    const under = (rest: string): string => (rest === '' ? toPath : `${toPath}/${rest}`);
    for (const [rest, text] of source.files) claim(under(rest), text, key);
    // What the target has there and the `from` side no longer does goes: the move is the whole file or folder.
    for (const rest of target.files.keys()) if (!source.files.has(rest)) claim(under(rest), undefined, key);
  });

  const files: PromotionFile[] = [];
  const deletions: string[] = [];
  const edits: FileEdit[] = [];
  const sorted = [...wanted].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const digest = digestOf(JSON.stringify(carried));
  for (const [path, text] of sorted) {
    const current = toTree.get(path);
    if (text === undefined) {
      if (current === undefined) continue;
      deletions.push(join(input.toRoot, path));
      edits.push({ path, change: 'deleted' });
    } else if (current !== text) {
      files.push({ path: join(input.toRoot, path), text });
      edits.push({ path, change: current === undefined ? 'added' : 'modified' });
    }
  }
  return { files, deletions, edits, digest };
}
