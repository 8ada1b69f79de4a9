// How the renderers read a repository: Git trees and blobs by id, and repository-relative paths resolved in them.

/** One entry of a tree (a Git tree object, or a directory of a plain folder read the same way). */
export interface RepositoryEntry {
  name: string;
  oid: string;
  type: 'tree' | 'blob' | 'commit';
  mode: string;
}

/**
 * Reads objects by id: the renderers' only access to a repository (the Git source's object reader, with
 * its memory of trees, satisfies it as it is; `rollgate validate DIR` reads a folder through the same shape).
 */
export interface RepositoryReader {
  readTree(oid: string): Promise<RepositoryEntry[]>;
  readBlob(oid: string): Promise<Uint8Array>;
}

/** What a repository path names: a tree or a blob, an entry the renderers never follow, or nothing. */
export type RepositoryTarget =
  | { type: 'tree' | 'blob'; oid: string }
  | { type: 'skipped'; oid: string; why: 'symlink' | 'submodule' }
  | { type: 'missing' };

const SYMLINK_MODE = '120000';

/** Joins repository paths (`''` is the root). */
export function joinPath(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

/** The folder of a repository path (`''` for a top-level name). */
export function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at === -1 ? '' : path.slice(0, at);
}

/** True when `path` is `dir` or inside it. */
export function isAtOrBelow(path: string, dir: string): boolean {
  return dir === '' || path === dir || path.startsWith(`${dir}/`);
}

/**
 * `relative` (as a kustomization writes it) resolved against the folder `dir`: a normalized
 * repository path, or `outside` when its `..` climb above the repository's root.
 */
export function resolveRelative(dir: string, relative: string): string | 'outside' {
  const parts = dir === '' ? [] : dir.split('/');
  for (const segment of relative.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) return 'outside';
      parts.pop();
    } else parts.push(segment);
  }
  return parts.join('/');
}

/** What an entry is to a renderer. */
export function targetOf(entry: RepositoryEntry): RepositoryTarget {
  if (entry.type === 'commit') return { type: 'skipped', oid: entry.oid, why: 'submodule' };
  if (entry.mode === SYMLINK_MODE) return { type: 'skipped', oid: entry.oid, why: 'symlink' };
  return { type: entry.type, oid: entry.oid };
}

/** Follows a normalized repository path from the root tree, one tree read per segment. */
export async function lookUp(
  reader: RepositoryReader,
  rootTree: string,
  path: string,
): Promise<RepositoryTarget> {
  let current: RepositoryTarget = { type: 'tree', oid: rootTree };
  for (const segment of path.split('/').filter(Boolean)) {
    if (current.type !== 'tree') return current.type === 'skipped' ? current : { type: 'missing' };
    const entry = (await reader.readTree(current.oid)).find((e) => e.name === segment);
    if (entry === undefined) return { type: 'missing' };
    current = targetOf(entry);
  }
  return current;
}
