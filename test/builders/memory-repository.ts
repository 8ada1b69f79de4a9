// Test builder: a repository of files held in memory, read through the renderers' RepositoryReader (ids from content, as Git's).
import { createHash } from 'node:crypto';
import type { RepositoryEntry, RepositoryReader } from '../../src/render/repository-reader.ts';

/** A repository in memory: its root tree and a reader that counts tree reads. */
export interface MemoryRepository {
  root: string;
  reader: RepositoryReader;
  treeReads: () => number;
}

/** Builds the trees of `files` (path → text; `null`-free); a `symlink:` text makes a symlink entry. */
export function memoryRepository(files: Record<string, string>): MemoryRepository {
  const trees = new Map<string, RepositoryEntry[]>();
  const blobs = new Map<string, Uint8Array>();
  let reads = 0;
  const build = (prefix: string): string => {
    const names = new Set<string>();
    for (const path of Object.keys(files)) {
      if (prefix !== '' && !path.startsWith(`${prefix}/`)) continue;
      names.add((prefix === '' ? path : path.slice(prefix.length + 1)).split('/')[0] as string);
    }
    const entries: RepositoryEntry[] = [...names].sort().map((name) => {
      const path = prefix === '' ? name : `${prefix}/${name}`;
      const text = files[path];
      if (text === undefined) return { name, oid: build(path), type: 'tree', mode: '040000' };
      const blob = new TextEncoder().encode(text.replace(/^symlink:/, ''));
      const oid = createHash('sha1').update(blob).digest('hex');
      blobs.set(oid, blob);
      return { name, oid, type: 'blob', mode: text.startsWith('symlink:') ? '120000' : '100644' };
    });
    const oid = createHash('sha1').update(JSON.stringify(entries)).digest('hex');
    trees.set(oid, entries);
    return oid;
  };
  const root = build('');
  return {
    root,
    treeReads: () => reads,
    reader: {
      async readTree(oid) {
        reads += 1;
        const tree = trees.get(oid);
        if (tree === undefined) throw new Error(`no tree ${oid}`);
        return tree;
      },
      async readBlob(oid) {
        const blob = blobs.get(oid);
        if (blob === undefined) throw new Error(`no blob ${oid}`);
        return blob;
      },
    },
  };
}
