// What a ref of a repository on this machine points at, read from its files in this process (isomorphic-git
// reads loose refs and packed-refs; git writes both by renaming a lock file into place, so a read sees the
// old value or the new one): for the servers that answer many questions about one local repository, where a
// `git` process per question cost more than the answer.
import fs from 'node:fs';
import git from 'isomorphic-git';
import { isBranchName } from './branch-name.ts';

/** What `ref` (a full name, `refs/…`) points at in the repository at `gitdir`, or undefined when there is none. */
export async function localRefSha(gitdir: string, ref: string): Promise<string | undefined> {
  try {
    return await git.resolveRef({ fs, gitdir, ref });
  } catch (err) {
    if (err instanceof git.Errors.NotFoundError) return undefined;
    throw err;
  }
}

/**
 * The commit branch `branch` is at (git keeps only commits on `refs/heads/`), or undefined when there is no
 * such branch; a name that cannot be a branch is answered so before any file is read.
 */
export function localBranchSha(gitdir: string, branch: string): Promise<string | undefined> {
  return isBranchName(branch) ? localRefSha(gitdir, `refs/heads/${branch}`) : Promise.resolve(undefined);
}
