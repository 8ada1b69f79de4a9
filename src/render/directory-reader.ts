// A folder on disk read as a repository (`rollgate validate DIR`): directories as trees, files as blobs, ids are paths.
import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RepositoryEntry, RepositoryReader } from './repository-reader.ts';

/** Folders never read (as `rollgate validate` never walked them): Git's metadata, dependency trees. */
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules']);

/** The root tree's id in a {@link directoryReader}. */
export const DIRECTORY_ROOT = '.';

/** Lists a folder's entries with their types (node:fs by default; a test counts the listings). */
export type ListFolder = (path: string) => Promise<Dirent[]>;

const listFolder: ListFolder = (path) => readdir(path, { withFileTypes: true });

/**
 * Reads the folder `root` through {@link RepositoryReader}: an object's id is its path from `root`
 * (`.` for `root` itself), so ids say nothing of content and nothing read this way may be cached across
 * readers. A symlink is an entry the renderers skip, as in Git; `.git` and `node_modules` are not read.
 *
 * One reader lists each folder once: a path is looked up from the root one folder at a time, so a reader
 * that listed again on every lookup listed the root (and stat'ed each of its entries) once per file a
 * render resolved (`rollgate validate examples/` in a checkout with 32,000 files at its top: 16 s, now 1.3 s).
 * A reader serves one command's run, which sees the folder as it was when each part was first listed.
 */
export function directoryReader(root: string, list: ListFolder = listFolder): RepositoryReader {
  const at = (oid: string): string => (oid === DIRECTORY_ROOT ? root : join(root, oid));
  const child = (oid: string, name: string): string => (oid === DIRECTORY_ROOT ? name : `${oid}/${name}`);
  const listed = new Map<string, Promise<RepositoryEntry[]>>();
  const entriesOf = async (oid: string): Promise<RepositoryEntry[]> => {
    // The listing's own types (no stat per entry), in name order as a Git tree's.
    const listing = (await list(at(oid))).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const entries: RepositoryEntry[] = [];
    for (const entry of listing) {
      const { name } = entry;
      if (SKIPPED_FOLDERS.has(name)) continue;
      const path = child(oid, name);
      if (entry.isSymbolicLink()) entries.push({ name, oid: path, type: 'blob', mode: '120000' });
      else if (entry.isDirectory()) entries.push({ name, oid: path, type: 'tree', mode: '040000' });
      else if (entry.isFile()) entries.push({ name, oid: path, type: 'blob', mode: '100644' });
    }
    return entries;
  };
  return {
    readTree(oid: string): Promise<RepositoryEntry[]> {
      let entries = listed.get(oid);
      if (entries === undefined) {
        entries = entriesOf(oid);
        listed.set(oid, entries);
        // A failed listing (gone, unreadable) is not remembered: the next lookup asks the disk again.
        entries.catch(() => listed.delete(oid));
      }
      return entries;
    },
    async readBlob(oid: string): Promise<Uint8Array> {
      return readFile(at(oid));
    },
  };
}
