// Reads one file as it was at a revision (`HEAD~1`, a branch, a tag, a commit id) of the local repository holding it.
import git from 'isomorphic-git';
import * as fs from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

/** A revision that does not name a commit of the repository, or a file outside any repository. */
export class LocalRevisionError extends Error {
  override readonly name = 'LocalRevisionError';
  readonly code = 'git.local_revision';
}

/** `REF` followed by any `~N` / `^N` (git's own revision suffixes: first parent N times, Nth parent). */
const REVISION = /^(.+?)((?:[~^]\d*)*)$/;

async function commitOf(dir: string, base: string): Promise<string> {
  try {
    return await git.resolveRef({ fs, dir, ref: base });
  } catch {
    // Not a ref: maybe an abbreviated commit id.
    if (/^[0-9a-f]{4,40}$/i.test(base)) {
      try {
        return await git.expandOid({ fs, dir, oid: base.toLowerCase() });
      } catch {
        // Falls through to the error below.
      }
    }
    throw new LocalRevisionError(`${base} names no commit of the repository at ${dir}`);
  }
}

/** The commit `revision` names in the repository at `dir`. */
export async function resolveRevision(dir: string, revision: string): Promise<string> {
  const match = REVISION.exec(revision);
  if (match === null) throw new LocalRevisionError(`cannot read revision ${JSON.stringify(revision)}`);
  let oid = await commitOf(dir, match[1] ?? revision);
  for (const suffix of (match[2] ?? '').match(/[~^]\d*/g) ?? []) {
    const count = suffix.length === 1 ? 1 : Number(suffix.slice(1));
    // `~N`: N first parents back; `^N`: the Nth parent (`^0` is the commit itself).
    const hops = suffix.startsWith('~')
      ? Array.from({ length: count }, () => 0)
      : count === 0
        ? []
        : [count - 1];
    for (const parentIndex of hops) {
      const { commit } = await git.readCommit({ fs, dir, oid });
      const parent = commit.parent[parentIndex];
      if (parent === undefined)
        throw new LocalRevisionError(`${revision}: commit ${oid.slice(0, 7)} has no such parent`);
      oid = parent;
    }
  }
  return oid;
}

/**
 * The text of `file` (a path on disk) at `revision` of the repository that holds it; undefined when the
 * file did not exist then.
 */
export async function readFileAtRevision(file: string, revision: string): Promise<string | undefined> {
  const absolute = resolve(file);
  let dir: string;
  try {
    dir = await git.findRoot({ fs, filepath: dirname(absolute) });
  } catch {
    throw new LocalRevisionError(`${file} is not inside a Git repository`);
  }
  const oid = await resolveRevision(dir, revision);
  const filepath = relative(dir, absolute).split(sep).join('/');
  try {
    const { blob } = await git.readBlob({ fs, dir, oid, filepath });
    return new TextDecoder().decode(blob);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'NotFoundError') return undefined;
    throw err;
  }
}
