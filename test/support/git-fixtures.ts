// Test helpers: temporary Git repositories built and committed to with the real `git` CLI.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Environment for every git call: no user or system config, fixed identity, no prompts. */
export const gitEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Rollgate Test',
  GIT_AUTHOR_EMAIL: 'test@rollgate.invalid',
  GIT_COMMITTER_NAME: 'Rollgate Test',
  GIT_COMMITTER_EMAIL: 'test@rollgate.invalid',
};

/** Runs `git` in `cwd` and returns its trimmed stdout; throws with stderr on failure. */
export function git(cwd: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, {
    cwd,
    env: gitEnv,
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  }).trim();
}

/**
 * Runs `git` without blocking the event loop: needed whenever the other end is a server in this
 * process (a push or clone through the smart-HTTP bridge).
 */
export function gitAsync(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd, env: gitEnv, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`git ${args.join(' ')} failed: ${stderr || error.message}`));
        else resolve(stdout.trim());
      },
    );
  });
}

/**
 * `git add --all`, `git commit` and `git rev-parse HEAD` in one `sh`: the three gits are forked by the small
 * shell rather than by this test process. A spawn cost the spawning Node process 4-8 ms of CPU on a
 * paravirtualized 2-core machine, and spawns (Git's most of all) were the largest item in the test forks'
 * profiles (docs/BENCHMARKS.md). The message and flags reach git as arguments, never through the shell's parser.
 */
function stageAndCommit(cwd: string, message: string, flags: readonly string[]): string {
  const script = 'git add --all && git commit --quiet --allow-empty "$@" && git rev-parse HEAD';
  return execFileSync('sh', ['-c', script, 'sh', ...flags, '-m', message], {
    cwd,
    env: gitEnv,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  }).trim();
}

/** A temporary directory removed by {@link TempDir.remove}. */
export interface TempDir {
  path: string;
  remove(): void;
}

export function makeTempDir(prefix = 'rollgate-git-'): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Creates `<root>/<name>.git` as an empty bare repository whose HEAD names `branch`. */
export function createBareRepository(root: string, name: string, branch = 'main'): string {
  const path = join(root, `${name}.git`);
  mkdirSync(path, { recursive: true });
  git(path, ['init', '--bare', '--quiet', `--initial-branch=${branch}`]);
  return path;
}

/** A working copy that writes files, commits and pushes with the real git CLI. */
export class WorkingCopy {
  readonly dir: string;

  constructor(
    dir: string,
    readonly branch = 'main',
  ) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    git(dir, ['init', '--quiet', `--initial-branch=${branch}`]);
  }

  /** Writes (string) or deletes (null) files, relative to the working copy. */
  write(files: Record<string, string | null>): this {
    for (const [file, content] of Object.entries(files)) {
      const path = join(this.dir, file);
      if (content === null) {
        rmSync(path, { force: true });
      } else {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, content);
      }
    }
    return this;
  }

  /** `git mv` a file. */
  move(from: string, to: string): this {
    mkdirSync(dirname(join(this.dir, to)), { recursive: true });
    git(this.dir, ['mv', from, to]);
    return this;
  }

  /** Stages everything and commits; returns the new commit id. */
  commit(message = 'change'): string {
    return stageAndCommit(this.dir, message, []);
  }

  head(): string {
    return git(this.dir, ['rev-parse', 'HEAD']);
  }

  /** Starts a new history with no parent (for "unrelated histories"), keeping no files. */
  orphan(): this {
    git(this.dir, ['checkout', '--quiet', '--orphan', `orphan-${Date.now()}`]);
    git(this.dir, ['rm', '-r', '--quiet', '--force', '--ignore-unmatch', '.']);
    return this;
  }

  /** Rewrites the last commit (a new commit id, same parent) for force-push scenarios. */
  amend(message = 'amended'): string {
    return stageAndCommit(this.dir, message, ['--amend']);
  }

  /** Pushes HEAD to `remote` (a path or URL, also one served in this process) as the tracked branch. */
  async push(remote: string, options: { force?: boolean } = {}): Promise<void> {
    const args = ['push', '--quiet'];
    if (options.force) args.push('--force');
    args.push(remote, `HEAD:refs/heads/${this.branch}`);
    await gitAsync(this.dir, args);
  }
}

/** A Kubernetes-style manifest with one ConfigMap, for tests that only need distinct objects. */
export function configMapYaml(name: string, data: Record<string, string>, namespace?: string): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ${name}`];
  if (namespace) lines.push(`  namespace: ${namespace}`);
  lines.push('data:');
  for (const [key, value] of Object.entries(data)) lines.push(`  ${key}: ${JSON.stringify(value)}`);
  return `${lines.join('\n')}\n`;
}
