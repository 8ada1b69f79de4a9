// A checkout of an upstream repository (argoproj/argo-cd, argoproj/argo-rollouts) that tests read in place at
// test time, never copied in. A variable names it (a bare git dir or a work tree); otherwise
// .mirror/OWNER+NAME/repo beside the repository root, or beside the folder the ../shared link points to (where
// the workplace's fetched snapshots live). Without one, the tests that read it skip, each file saying so in
// one line; a second variable set to 1 makes that a failure (.ci/run sets it when it finds the checkout).
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** Which upstream repository, and the variables that name it and require it. */
export interface UpstreamRepository {
  /** `owner/name` on GitHub. */
  readonly github: string;
  /** The variable naming the checkout. */
  readonly repoEnv: string;
  /** The variable that makes a missing checkout fail the tests instead of skipping them. */
  readonly requireEnv: string;
}

/** A checkout as the tests read it. */
export interface UpstreamCheckout {
  /** True when no checkout is there: skip what reads it (`describe.skipIf(checkout.missing)`). */
  readonly missing: boolean;
  /** The git dir or work tree read. */
  readonly repo: string;
  /** The commit read (HEAD of the checkout), for messages. */
  readonly commit: string;
  /** The text of PATH at that commit (throws when it is not there). */
  show(path: string): string;
  /** The names directly under FOLDER at that commit (files and folders). */
  list(folder: string): string[];
  /** Every file under FOLDER at that commit, at any depth, as paths from the repository root. */
  files(folder: string): string[];
  /** True when PATH exists at that commit. */
  has(path: string): boolean;
}

function mirrorPath(upstream: UpstreamRepository): string[] {
  return ['.mirror', upstream.github.replace('/', '+'), 'repo'];
}

/** Where the checkout is looked for without the variable: beside the repository. */
export function defaultCheckoutPath(upstream: UpstreamRepository): string {
  return resolve(REPO_ROOT, '..', ...mirrorPath(upstream));
}

/** The same place beside the real folder of ../shared, when that is a link (a clone made elsewhere). */
function besideSharedFolder(upstream: UpstreamRepository): string | undefined {
  try {
    return resolve(dirname(realpathSync(resolve(REPO_ROOT, '..', 'shared'))), ...mirrorPath(upstream));
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function git(repo: string, args: string[]): { ok: boolean; out: string; err: string } {
  const run = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { ok: run.status === 0, out: run.stdout ?? '', err: (run.stderr ?? '').trim() };
}

/**
 * The checkout of `upstream` for the test file `testFile` (the caller's `import.meta.filename`). When it is
 * absent, one line on stderr names what `skips` (the tests that read it), the path looked at and how to get
 * it, and the caller skips; under `requireEnv=1` this throws instead, failing the file as it loads.
 */
export function upstreamCheckout(
  upstream: UpstreamRepository,
  testFile: string,
  skips: string,
): UpstreamCheckout {
  const configured = process.env[upstream.repoEnv];
  const candidates = configured
    ? [resolve(configured)]
    : [defaultCheckoutPath(upstream), besideSharedFolder(upstream)].filter((path) => path !== undefined);
  const repo = candidates.find(isDirectory) ?? candidates[0]!;
  const head = isDirectory(repo) ? git(repo, ['rev-parse', 'HEAD']) : undefined;
  const missing = head?.ok !== true;
  if (missing) {
    const file = relative(REPO_ROOT, testFile);
    const shown = configured ? repo : relative(REPO_ROOT, repo);
    const how = `clone https://github.com/${upstream.github} there (\`git clone --bare\` does) or set ${upstream.repoEnv} to a checkout`;
    if (process.env[upstream.requireEnv] === '1')
      throw new Error(
        `${file} needs a checkout of ${upstream.github} at ${shown}, which is missing (${upstream.requireEnv}=1 makes that a failure): ${how}`,
      );
    process.stderr.write(
      `skipped in ${file}: ${skips}, no ${upstream.github} checkout at ${shown} (${how})\n`,
    );
  }
  const commit = head?.out.trim() ?? '';
  return {
    missing,
    repo,
    commit,
    show(path) {
      const shown = git(repo, ['show', `${commit}:${path}`]);
      if (!shown.ok) throw new Error(`cannot read ${commit}:${path} from ${repo}: ${shown.err}`);
      return shown.out;
    },
    list(folder) {
      const listed = git(repo, ['ls-tree', '--name-only', `${commit}:${folder}`]);
      if (!listed.ok) throw new Error(`cannot list ${folder} in ${repo}: ${listed.err}`);
      return listed.out.split('\n').filter((name) => name !== '');
    },
    files(folder) {
      const listed = git(repo, ['ls-tree', '-r', '--name-only', commit, '--', folder]);
      if (!listed.ok) throw new Error(`cannot list ${folder} in ${repo}: ${listed.err}`);
      return listed.out.split('\n').filter((name) => name !== '');
    },
    has(path) {
      return git(repo, ['cat-file', '-e', `${commit}:${path}`]).ok;
    },
  };
}
