// A commit's tree with some files replaced, read without writing Git: what a promotion's edit would make of the target.
import { createHash } from 'node:crypto';
import type { RepositoryEntry, RepositoryReader } from './repository-reader.ts';
import { lookUp, parentOf } from './repository-reader.ts';

/** A file as an edit would leave it (repository path, normalized). */
export interface EditedFile {
  path: string;
  text: string;
}

/** The edited tree: read it through `reader` from `rootTree`, as any commit's. */
export interface EditedTree {
  reader: RepositoryReader;
  rootTree: string;
}

const TREE_PREFIX = 'edited-tree:';
const FILE_MODE = '100644';
const TREE_MODE = '040000';

/** Git's own id of a blob holding `bytes`: an edited file equal to a committed one has the committed id. */
function blobOid(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * `rootTree` read through `reader` with `files` written over it (a path that did not exist is added,
 * with its folders). An edited blob's id is Git's id of its content, so input keys and the render cache
 * treat it as the commit of the edit would; a folder holding an edit gets an id of its own made from
 * its original id and the edits below it, so caches keyed by tree id never mix the two.
 */
export function editedTree(
  reader: RepositoryReader,
  rootTree: string,
  files: readonly EditedFile[],
): EditedTree {
  const encoder = new TextEncoder();
  const blobs = new Map<string, Uint8Array>();
  const edits = files.map((file) => {
    const bytes = encoder.encode(file.text);
    const oid = blobOid(bytes);
    blobs.set(oid, bytes);
    return { path: file.path, oid };
  });
  const digest = createHash('sha256')
    .update(rootTree)
    .update(JSON.stringify([...edits].sort((a, b) => a.path.localeCompare(b.path))))
    .digest('hex')
    .slice(0, 32);
  // Folders holding an edit, by path: the root and every folder of an edited file.
  const editedDirs = new Set<string>(['']);
  for (const { path } of edits)
    for (let dir = parentOf(path); dir !== ''; dir = parentOf(dir)) editedDirs.add(dir);
  const treeId = (dir: string): string => `${TREE_PREFIX}${digest}:${dir}`;

  const edited: RepositoryReader = {
    async readTree(oid: string): Promise<RepositoryEntry[]> {
      if (!oid.startsWith(treeId(''))) return reader.readTree(oid);
      const dir = oid.slice(treeId('').length);
      const original = await lookUp(reader, rootTree, dir);
      const entries = original.type === 'tree' ? await reader.readTree(original.oid) : [];
      const byName = new Map(entries.map((entry) => [entry.name, entry]));
      for (const child of editedDirs) {
        if (child === '' || parentOf(child) !== dir) continue;
        const name = child.slice(dir === '' ? 0 : dir.length + 1);
        byName.set(name, { name, oid: treeId(child), type: 'tree', mode: TREE_MODE });
      }
      for (const { path, oid: blob } of edits) {
        if (parentOf(path) !== dir) continue;
        const name = path.slice(dir === '' ? 0 : dir.length + 1);
        byName.set(name, { name, oid: blob, type: 'blob', mode: FILE_MODE });
      }
      return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async readBlob(oid: string): Promise<Uint8Array> {
      return blobs.get(oid) ?? reader.readBlob(oid);
    },
  };
  return { reader: edited, rootTree: treeId('') };
}
