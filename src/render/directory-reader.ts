// A folder on disk read as a repository (`rollgate validate DIR`): directories as trees, files as blobs, ids are paths.
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RepositoryEntry, RepositoryReader } from './repository-reader.ts';

/** Folders never read (as `rollgate validate` never walked them): Git's metadata, dependency trees. */
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules']);

/** The root tree's id in a {@link directoryReader}. */
export const DIRECTORY_ROOT = '.';

/**
 * Reads the folder `root` through {@link RepositoryReader}: an object's id is its path from `root`
 * (`.` for `root` itself), so ids say nothing of content and nothing read this way may be cached across
 * reads. A symlink is an entry the renderers skip, as in Git; `.git` and `node_modules` are not read.
 */
export function directoryReader(root: string): RepositoryReader {
  const at = (oid: string): string => (oid === DIRECTORY_ROOT ? root : join(root, oid));
  const child = (oid: string, name: string): string => (oid === DIRECTORY_ROOT ? name : `${oid}/${name}`);
  return {
    async readTree(oid: string): Promise<RepositoryEntry[]> {
      const names = (await readdir(at(oid))).sort();
      const entries: RepositoryEntry[] = [];
      for (const name of names) {
        if (SKIPPED_FOLDERS.has(name)) continue;
        const path = child(oid, name);
        const stat = await lstat(at(path));
        if (stat.isSymbolicLink()) entries.push({ name, oid: path, type: 'blob', mode: '120000' });
        else if (stat.isDirectory()) entries.push({ name, oid: path, type: 'tree', mode: '040000' });
        else if (stat.isFile()) entries.push({ name, oid: path, type: 'blob', mode: '100644' });
      }
      return entries;
    },
    async readBlob(oid: string): Promise<Uint8Array> {
      return readFile(at(oid));
    },
  };
}
