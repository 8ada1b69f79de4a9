// Real Git on the double's bare repositories: refs, commit lookups, and server-side merges without a worktree.
import { execFile } from 'node:child_process';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { localBranchSha, localRefSha } from '../../../src/git/local-ref.ts';
import { gitEnv } from '../git-fixtures.ts';

/** Runs git in a bare repository without blocking the event loop (the double serves requests meanwhile). */
export function runGit(
  repoPath: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
): Promise<{ stdout: string; code: number; stderr: string }> {
  return run('git', repoPath, args, env, input);
}

/** Runs a POSIX shell script (its arguments as $1, $2...) in a bare repository, as runGit runs git. */
function runShell(
  repoPath: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
): Promise<{ stdout: string; code: number; stderr: string }> {
  return run('sh', repoPath, ['-c', script, 'sh', ...args], env, input);
}

function run(
  command: string,
  repoPath: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input: string | undefined,
): Promise<{ stdout: string; code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: repoPath, env: { ...gitEnv, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ stdout: stdout.trim(), code, stderr });
      },
    );
    // A command that does not read its input may exit before the write lands.
    child.stdin?.on('error', () => undefined);
    if (input === undefined) child.stdin?.end();
    else child.stdin?.end(input);
  });
}

async function gitOk(
  repoPath: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
): Promise<string> {
  const result = await runGit(repoPath, args, env, input);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/**
 * Every ref and the object it points at, read from the repository's files in this process
 * (src/git/local-ref.ts): the double reads refs at every API call and push, and a spawn from a test fork
 * costs more than the git it runs (docs/BENCHMARKS.md).
 */
export async function listRefs(repoPath: string): Promise<Map<string, string>> {
  const names = await git.listRefs({ fs, gitdir: repoPath, filepath: 'refs' });
  const refs = new Map<string, string>();
  for (const name of names) {
    const sha = await localRefSha(repoPath, `refs/${name}`);
    if (sha !== undefined) refs.set(`refs/${name}`, sha);
  }
  return refs;
}

// Commits never change, so a full id once found to name a commit is not asked about again.
const knownCommits = new Set<string>();

/** The commit `revision` names, or undefined when there is none. */
export async function resolveCommit(repoPath: string, revision: string): Promise<string | undefined> {
  const key = `${repoPath}\u0000${revision.toLowerCase()}`;
  if (knownCommits.has(key)) return revision.toLowerCase();
  const result = await runGit(repoPath, [
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${revision}^{commit}`,
  ]);
  if (result.code !== 0 || result.stdout.length === 0) return undefined;
  if (result.stdout === revision.toLowerCase()) knownCommits.add(key);
  return result.stdout;
}

/** The commit branch `branch` is at, or undefined. */
export function branchSha(repoPath: string, branch: string): Promise<string | undefined> {
  return localBranchSha(repoPath, branch);
}

/** Several branches' commits (absent branches are left out). */
export async function branchShas(repoPath: string, branches: string[]): Promise<Map<string, string>> {
  const shas = new Map<string, string>();
  for (const branch of branches) {
    const sha = await branchSha(repoPath, branch);
    if (sha !== undefined) shas.set(branch, sha);
  }
  return shas;
}

/**
 * Commits `files` (null deletes) on top of `parent` directly in the bare repository, through a
 * throw-away index: what a forge's web editor or contents API does, no clone needed. Returns the commit;
 * the caller moves the branch.
 */
export async function commitFiles(
  repoPath: string,
  request: { parent?: string; files: Record<string, string | null>; message: string },
): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'rollgate-double-commit-'));
  const index = join(scratch, 'index');
  try {
    // Two spawns from this process whatever the number of files (one hash-object for every blob, one small
    // shell for the rest), not 4 + one a file: a spawn from a test fork is the costly part (git-fixtures.ts).
    const written = Object.entries(request.files).filter(
      (entry): entry is [string, string] => entry[1] !== null,
    );
    const blobFiles = written.map(([, content], i) => {
      const file = join(scratch, `blob-${i}`);
      writeFileSync(file, content);
      return file;
    });
    const blobs =
      blobFiles.length === 0
        ? []
        : (await gitOk(repoPath, ['hash-object', '-w', '--no-filters', '--', ...blobFiles])).split('\n');
    const lines = written.map(([path], i) => `100644 ${blobs[i]}\t${path}`);
    for (const [path, content] of Object.entries(request.files))
      if (content === null) lines.push(`0 ${'0'.repeat(40)}\t${path}`);
    const script = [
      'set -e',
      'if [ -n "$1" ]; then git read-tree "$1"; fi',
      'git update-index --index-info',
      'tree=$(git write-tree)',
      'if [ -n "$1" ]; then git commit-tree "$tree" -p "$1" -m "$2"; else git commit-tree "$tree" -m "$2"; fi',
    ].join('\n');
    const committed = await runShell(
      repoPath,
      script,
      [request.parent ?? '', request.message],
      { GIT_INDEX_FILE: index },
      `${lines.join('\n')}\n`,
    );
    if (committed.code !== 0)
      throw new Error(`commit in ${repoPath} failed (${committed.code}): ${committed.stderr}`);
    return committed.stdout;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Moves `refs/heads/<branch>` to `sha` only if it still is at `expected` (undefined: must not exist). */
export async function moveBranch(
  repoPath: string,
  branch: string,
  sha: string,
  expected?: string,
): Promise<boolean> {
  const old = expected ?? '0'.repeat(40);
  return (await runGit(repoPath, ['update-ref', `refs/heads/${branch}`, sha, old])).code === 0;
}

/** Commits reachable from `head` and not from `base` (what a pull request would bring). */
export async function countAhead(repoPath: string, base: string, head: string): Promise<number> {
  return Number(await gitOk(repoPath, ['rev-list', '--count', `${base}..${head}`]));
}

export type MergeOutcome =
  { kind: 'merged'; sha: string } | { kind: 'conflict'; detail: string } | { kind: 'base-moved' };

/**
 * Merges `headSha` into branch `base` the way a forge's merge button does: `git merge-tree --write-tree`
 * computes the merged tree without a worktree, `commit-tree` makes the two-parent commit, and
 * `update-ref` moves the base only if it still points at `baseSha` (a push in between loses nothing).
 */
export async function mergeIntoBranch(
  repoPath: string,
  request: {
    base: string;
    baseSha: string;
    headSha: string;
    message: string;
    author: { name: string; email: string };
    committer: { name: string; email: string };
  },
): Promise<MergeOutcome> {
  const merged = await runGit(repoPath, [
    'merge-tree',
    '--write-tree',
    '--no-messages',
    request.baseSha,
    request.headSha,
  ]);
  if (merged.code === 1) return { kind: 'conflict', detail: merged.stdout.split('\n').slice(1).join(', ') };
  if (merged.code !== 0) throw new Error(`git merge-tree failed (${merged.code}): ${merged.stderr}`);
  const tree = merged.stdout.split('\n')[0] ?? '';
  const sha = await gitOk(
    repoPath,
    ['commit-tree', tree, '-p', request.baseSha, '-p', request.headSha, '-m', request.message],
    {
      GIT_AUTHOR_NAME: request.author.name,
      GIT_AUTHOR_EMAIL: request.author.email,
      GIT_COMMITTER_NAME: request.committer.name,
      GIT_COMMITTER_EMAIL: request.committer.email,
    },
  );
  const moved = await runGit(repoPath, [
    'update-ref',
    '-m',
    'merge',
    `refs/heads/${request.base}`,
    sha,
    request.baseSha,
  ]);
  if (moved.code !== 0) return { kind: 'base-moved' };
  return { kind: 'merged', sha };
}

/** What a push event says about one commit. */
export interface CommitDetails {
  id: string;
  treeId: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
  added: string[];
  removed: string[];
  modified: string[];
}

export async function commitDetails(repoPath: string, sha: string): Promise<CommitDetails> {
  const fields = (
    await gitOk(repoPath, [
      'show',
      '-s',
      '--format=%H%x00%T%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B',
      sha,
    ])
  ).split('\0');
  const [id = sha, treeId = '', an = '', ae = '', ad = '', cn = '', ce = '', cd = '', message = ''] = fields;
  const changes = await gitOk(repoPath, [
    'diff-tree',
    '-r',
    '--root',
    '--no-commit-id',
    '--name-status',
    '--first-parent',
    '-m',
    sha,
  ]);
  const details: CommitDetails = {
    id,
    treeId,
    message: message.trim(),
    timestamp: cd,
    author: { name: an, email: ae, date: ad },
    committer: { name: cn, email: ce, date: cd },
    added: [],
    removed: [],
    modified: [],
  };
  for (const line of changes.split('\n')) {
    const [kind, path] = line.split('\t');
    if (!path) continue;
    if (kind === 'A') details.added.push(path);
    else if (kind === 'D') details.removed.push(path);
    else details.modified.push(path);
  }
  return details;
}

/** Commits a push brought, oldest first, at most `limit` (GitHub lists 20 in a push event). */
export async function pushedCommits(
  repoPath: string,
  before: string | undefined,
  after: string,
  exclude: string[],
  limit = 20,
): Promise<string[]> {
  const args = ['rev-list', '--reverse', `--max-count=${limit}`, after];
  if (before) args.push(`^${before}`);
  for (const sha of exclude) args.push(`^${sha}`);
  const out = await gitOk(repoPath, args);
  return out.length === 0 ? [] : out.split('\n');
}

/** Whether `maybeAncestor` is reachable from `descendant` (a push that keeps it is not forced). */
export async function isAncestor(
  repoPath: string,
  maybeAncestor: string,
  descendant: string,
): Promise<boolean> {
  return (await runGit(repoPath, ['merge-base', '--is-ancestor', maybeAncestor, descendant])).code === 0;
}
