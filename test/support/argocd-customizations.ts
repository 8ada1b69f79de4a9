// Argo CD's resource customizations (its Lua health checks and actions), read at test time from a checkout of
// argoproj/argo-cd beside this repository, never copied in: they are the contract Rollgate's Rollout status
// must meet, exactly as upstream wrote it. ROLLGATE_ARGOCD_REPO names the checkout (a bare git dir or a work
// tree); otherwise .mirror/argoproj+argo-cd/repo beside the repository root, or beside the folder the
// ../shared link points to (where the workplace's fetched snapshots live). Without one, the tests that run the
// scripts skip, each file saying so in one line; ROLLGATE_REQUIRE_ARGOCD=1 makes that a failure. It is not
// tied to ROLLGATE_REQUIRE_CORPUS: a CI clone may have the corpus beside it without a fetched argo-cd.
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** The variable that names the argo-cd checkout. */
export const ARGOCD_REPO_ENV = 'ROLLGATE_ARGOCD_REPO';

/** The variable that makes a missing checkout fail the tests instead of skipping them. */
export const REQUIRE_ARGOCD_ENV = 'ROLLGATE_REQUIRE_ARGOCD';

const MIRROR_PATH = ['.mirror', 'argoproj+argo-cd', 'repo'] as const;

/** Where the checkout is looked for without the variable: beside the repository. */
export const DEFAULT_ARGOCD_REPO = resolve(REPO_ROOT, '..', ...MIRROR_PATH);

/** The same place beside the real folder of ../shared, when that is a link (a clone made elsewhere). */
function besideSharedFolder(): string | undefined {
  try {
    return resolve(dirname(realpathSync(resolve(REPO_ROOT, '..', 'shared'))), ...MIRROR_PATH);
  } catch {
    return undefined;
  }
}

/** The folder of one kind's customizations inside argo-cd. */
function kindFolder(group: string, kind: string): string {
  return `resource_customizations/${group}/${kind}`;
}

/** A checkout of argo-cd as the tests read it. */
export interface ArgoCdCustomizations {
  /** True when no checkout is there: skip what reads it (`describe.skipIf(argocd.missing)`). */
  readonly missing: boolean;
  /** The git dir or work tree read. */
  readonly repo: string;
  /** The commit read (HEAD of the checkout), for messages. */
  readonly commit: string;
  /** The text of `resource_customizations/GROUP/KIND/PATH` at that commit. */
  script(group: string, kind: string, path: string): string;
  /** The action names under `…/GROUP/KIND/actions/` (each a folder with an action.lua). */
  actions(group: string, kind: string): string[];
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
 * The argo-cd checkout for the test file `testFile` (the caller's `import.meta.filename`). When it is absent,
 * one line on stderr names what is missing and how to get it, and the caller skips; under
 * ROLLGATE_REQUIRE_ARGOCD=1 this throws instead, failing the file as it loads.
 */
export function argoCdCustomizations(testFile: string): ArgoCdCustomizations {
  const configured = process.env[ARGOCD_REPO_ENV];
  const candidates = configured
    ? [resolve(configured)]
    : [DEFAULT_ARGOCD_REPO, besideSharedFolder()].filter((path) => path !== undefined);
  const repo = candidates.find(isDirectory) ?? candidates[0]!;
  const head = isDirectory(repo) ? git(repo, ['rev-parse', 'HEAD']) : undefined;
  const missing = head?.ok !== true;
  if (missing) {
    const file = relative(REPO_ROOT, testFile);
    const shown = configured ? repo : relative(REPO_ROOT, repo);
    const how = `clone https://github.com/argoproj/argo-cd there (\`git clone --bare\` does) or set ${ARGOCD_REPO_ENV} to a checkout`;
    if (process.env[REQUIRE_ARGOCD_ENV] === '1')
      throw new Error(
        `${file} needs Argo CD's resource customizations from a checkout of argoproj/argo-cd at ${shown}, which is missing (${REQUIRE_ARGOCD_ENV}=1 makes that a failure): ${how}`,
      );
    process.stderr.write(
      `skipped in ${file}: the tests that run Argo CD's Lua customizations, no argoproj/argo-cd checkout at ${shown} (${how})\n`,
    );
  }
  const commit = head?.out.trim() ?? '';
  return {
    missing,
    repo,
    commit,
    script(group, kind, path) {
      const spec = `${commit}:${kindFolder(group, kind)}/${path}`;
      const shown = git(repo, ['show', spec]);
      if (!shown.ok) throw new Error(`cannot read ${spec} from ${repo}: ${shown.err}`);
      return shown.out;
    },
    actions(group, kind) {
      const listed = git(repo, ['ls-tree', '--name-only', `${commit}:${kindFolder(group, kind)}/actions`]);
      if (!listed.ok)
        throw new Error(`cannot list ${kindFolder(group, kind)}/actions in ${repo}: ${listed.err}`);
      return listed.out
        .split('\n')
        .filter(
          (name) =>
            name !== '' &&
            git(repo, ['cat-file', '-e', `${commit}:${kindFolder(group, kind)}/actions/${name}/action.lua`])
              .ok,
        );
    },
  };
}
