// Folds a source cache's many small packs (one per fetch) into one, keeping only what recent commits need.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { indexPack, packIndexFile } from './pack-index.ts';
import { readSnapshotFs } from './read-snapshot-fs.ts';

/**
 * Limits for indexing a compacted pack: its objects come from the cache, where each passed the fetch's
 * limits already, so these only keep the indexer's own bounds (2 GiB is the most an .idx here addresses).
 */
const COMPACTED_PACK_LIMITS = { maxObjectBytes: 1024 * 1024 * 1024, maxPackBytes: 2 ** 31 - 1 };

/** What a compaction did. */
export interface PackCompaction {
  packsBefore: number;
  /** Objects written to the new pack. */
  objects: number;
  /** Commits kept (the others asked for were not in the cache). */
  kept: string[];
}

/** Number of `.pack` files in a cache repository. */
export async function countPacks(gitdir: string): Promise<number> {
  const names = await fsp.readdir(join(gitdir, 'objects', 'pack')).catch(() => []);
  return names.filter((name) => name.endsWith('.pack')).length;
}

/**
 * Writes one pack with every object reachable from the `keep` commits' trees (not their history), then
 * deletes the other packs. Each fetch adds a pack, and isomorphic-git cannot repack, so without this a
 * long-running poller's cache would grow without bound and every object lookup would scan more packs.
 * The new pack is complete before any old one is deleted, so a crash leaves duplicates, never gaps.
 */
export async function compactPacks(gitdir: string, keep: readonly string[]): Promise<PackCompaction> {
  const packDir = join(gitdir, 'objects', 'pack');
  const before = (await fsp.readdir(packDir)).filter((name) => name.endsWith('.pack'));
  const fs = readSnapshotFs();
  const cache = {};
  const oids = new Set<string>();
  const kept: string[] = [];
  const walkTree = async (oid: string): Promise<void> => {
    if (oids.has(oid)) return;
    oids.add(oid);
    const { tree } = await git.readTree({ fs, gitdir, oid, cache });
    for (const entry of tree) {
      if (entry.type === 'tree') await walkTree(entry.oid);
      else if (entry.type === 'blob') oids.add(entry.oid);
    }
  };
  for (const commit of new Set(keep)) {
    try {
      const { commit: parsed } = await git.readCommit({ fs, gitdir, oid: commit, cache });
      oids.add(commit);
      await walkTree(parsed.tree);
      kept.push(commit);
    } catch {
      // Not in the cache (any more): nothing of it to keep.
    }
  }
  if (kept.length === 0) return { packsBefore: before.length, objects: 0, kept };
  const { filename } = await git.packObjects({ fs, gitdir, oids: [...oids], write: true, cache });
  // Indexed like a fetched pack (Node's zlib and SHA-1), not by isomorphic-git's pure-JS indexer.
  const packFile = join(packDir, filename);
  const indexing = await indexPack(await fsp.readFile(packFile), COMPACTED_PACK_LIMITS);
  if (!indexing.ok) {
    await fsp.rm(packFile, { force: true });
    throw new Error(`the compacted pack cannot be indexed: ${JSON.stringify(indexing.problem)}`);
  }
  await fsp.writeFile(packFile.replace(/\.pack$/, '.idx'), packIndexFile(indexing.index));
  for (const name of before) {
    if (name === filename) continue;
    await fsp.rm(join(packDir, name), { force: true });
    await fsp.rm(join(packDir, name.replace(/\.pack$/, '.idx')), { force: true });
  }
  return { packsBefore: before.length, objects: oids.size, kept };
}
