// The files one commit changed against its first parent, with both texts: what a revert of that commit undoes.
import git from 'isomorphic-git';
import * as fs from 'node:fs';

/** One changed file (repository-relative); `before`/`after` undefined: absent on that side. */
export interface ChangedFile {
  path: string;
  before?: string;
  after?: string;
}

/** A commit, its first parent and the files it changed (blobs only; modes aside). */
export interface CommitChanges {
  sha: string;
  parent: string;
  subject: string;
  changes: ChangedFile[];
}

/**
 * Reads `sha` in the repository at `gitdir` (bare or not) and compares its tree with its first parent's.
 * A root commit (no parent) is not revertible this way and is refused with a RangeError.
 */
export async function readCommitChanges(gitdir: string, sha: string): Promise<CommitChanges> {
  const { commit } = await git.readCommit({ fs, gitdir, oid: sha });
  const parent = commit.parent[0];
  if (parent === undefined) throw new RangeError(`commit ${sha.slice(0, 7)} has no parent to go back to`);
  const decoder = new TextDecoder();
  const changes: ChangedFile[] = [];
  await git.walk({
    fs,
    gitdir,
    trees: [git.TREE({ ref: parent }), git.TREE({ ref: sha })],
    map: async (path, entries) => {
      const [before, after] = entries ?? [];
      const beforeType = before ? await before.type() : undefined;
      const afterType = after ? await after.type() : undefined;
      // Walk into trees; a subtree with the same id on both sides holds no change.
      if (beforeType === 'tree' || afterType === 'tree') {
        if (beforeType === 'tree' && afterType === 'tree' && (await before?.oid()) === (await after?.oid()))
          return null;
        return true;
      }
      const beforeOid = beforeType === 'blob' ? await before?.oid() : undefined;
      const afterOid = afterType === 'blob' ? await after?.oid() : undefined;
      if (beforeOid === afterOid) return true;
      const text = async (entry: typeof before) => {
        const content = entry ? await entry.content() : undefined;
        return content === undefined ? undefined : decoder.decode(content);
      };
      changes.push({
        path,
        ...(beforeOid !== undefined ? { before: await text(before) } : {}),
        ...(afterOid !== undefined ? { after: await text(after) } : {}),
      });
      return true;
    },
  });
  return {
    sha,
    parent,
    subject: commit.message.split('\n')[0] ?? '',
    changes: changes.sort((a, b) => a.path.localeCompare(b.path)),
  };
}
