// The kustomization of a directory, read once per (path, tree id): what app discovery and input collection ask for again and again.
import type { RepositoryReader } from '../repository-reader.ts';
import { joinPath } from '../repository-reader.ts';
import { KUSTOMIZATION_FILE_NAMES, readKustomizationFile } from './kustomization-file.ts';
import type { KustomizationFile } from './kustomization-file.ts';

/** A directory's kustomization, read. */
export interface KustomizationAt {
  /** The directory (repository path). */
  dir: string;
  /** The kustomization file kustomize uses (repository path). */
  file: string;
  oid: string;
  /** Every kustomization file the directory holds (kustomize refuses more than one, in its own words). */
  files: Array<{ path: string; oid: string }>;
  read: KustomizationFile;
}

/** Entries kept before the oldest are forgotten: a repository of thousands of overlays fits. */
const DEFAULT_MAX_ENTRIES = 20_000;

/**
 * Reads and remembers kustomizations by (directory path, tree id): an unchanged directory is never read
 * or parsed again. The path is part of the key because a kustomization's paths resolve against it.
 */
export class KustomizationCache {
  private readonly entries = new Map<string, KustomizationAt | null>();

  constructor(private readonly maxEntries = DEFAULT_MAX_ENTRIES) {}

  /** The kustomization of the directory `dir` whose tree is `treeOid`; undefined when it holds none. */
  async get(reader: RepositoryReader, dir: string, treeOid: string): Promise<KustomizationAt | undefined> {
    const key = `${dir}\0${treeOid}`;
    const known = this.entries.get(key);
    if (known !== undefined) return known ?? undefined;
    const entries = await reader.readTree(treeOid);
    const files = KUSTOMIZATION_FILE_NAMES.flatMap((name) => {
      const entry = entries.find((e) => e.name === name && e.type === 'blob' && e.mode !== '120000');
      return entry ? [{ path: joinPath(dir, name), oid: entry.oid }] : [];
    });
    const chosen = files[0];
    let found: KustomizationAt | null = null;
    if (chosen !== undefined) {
      const text = new TextDecoder('utf-8').decode(await reader.readBlob(chosen.oid));
      found = {
        dir,
        file: chosen.path,
        oid: chosen.oid,
        files,
        read: readKustomizationFile(chosen.path, text),
      };
    }
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, found);
    return found ?? undefined;
  }
}
