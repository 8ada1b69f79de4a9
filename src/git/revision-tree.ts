// A revision of a local repository read as trees and blobs by id: what `rollgate plan --from` renders kustomizations from.
import git from 'isomorphic-git';
import * as fs from 'node:fs';
import type { ObjectReader, TreeEntry } from './tree-diff.ts';
import { resolveRevision } from './file-at-revision.ts';

/** The root tree of a revision and a reader of its objects (what the renderers take). */
export interface RevisionTree {
  /** The commit the revision names. */
  commit: string;
  rootTree: string;
  reader: ObjectReader;
}

/**
 * The tree of `revision` (`HEAD~1`, a branch, a tag, a commit id) in the repository whose work tree is
 * `dir`. An unknown revision is a `LocalRevisionError`.
 */
export async function revisionTree(dir: string, revision: string): Promise<RevisionTree> {
  const commit = await resolveRevision(dir, revision);
  const { commit: read } = await git.readCommit({ fs, dir, oid: commit });
  // isomorphic-git's object cache, for the packfiles read by this reader only.
  const cache = {};
  return {
    commit,
    rootTree: read.tree,
    reader: {
      async readTree(oid: string): Promise<TreeEntry[]> {
        const { tree } = await git.readTree({ fs, dir, oid, cache });
        return tree.map((entry) => ({
          name: entry.path,
          oid: entry.oid,
          type: entry.type,
          mode: entry.mode,
        }));
      },
      async readBlob(oid: string): Promise<Uint8Array> {
        return (await git.readBlob({ fs, dir, oid, cache })).blob;
      },
    },
  };
}
