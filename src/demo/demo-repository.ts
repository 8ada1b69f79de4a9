// The demo's Git side: a bare repository served over smart HTTP, and a work clone committed to with the real git CLI.
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serveGitRepositories, type GitServer } from '../git/smart-http-server.ts';
import { git } from './demo-git.ts';

/** The demo repository as a user sees it: a URL to clone, and a work clone the demo commits in. */
export interface DemoRepository {
  /** Clone URL, e.g. `http://127.0.0.1:41234/demo.git`. */
  url: string;
  /** The work clone the demo commits in (a plain folder with `.git`). */
  workDir: string;
  /** The bare repository the server serves (the demo forge merges in it). */
  bareDir: string;
  /** Rewrites the Rollout's image, commits and pushes; returns the new commit id. */
  commitImage(image: string, message: string): Promise<string>;
  /** Edits one file (relative to the repository), commits and pushes; returns the new commit id. */
  commitEdit(file: string, edit: (text: string) => string, message: string): Promise<string>;
  stop(): Promise<void>;
}

export interface CreateDemoRepositoryOptions {
  /** Folder the bare repository and the work clone go in (the caller removes it). */
  dir: string;
  /** The files of the first commit (examples/demo/). */
  seedDir: string;
  /** The file holding the Rollout whose image the demo changes, relative to seedDir. */
  rolloutFile: string;
  /** Adds more files to the first commit, in the work clone, after seedDir's are copied. */
  addToSeed?: (workDir: string) => Promise<void>;
  host?: string;
  port?: number;
}

const IMAGE_LINE = /^(\s*image:\s*)(\S+)\s*$/m;

/** Replaces the first `image:` value of a manifest; throws when there is none. */
export function replaceImage(manifest: string, image: string): string {
  if (!IMAGE_LINE.test(manifest)) throw new Error('the demo Rollout has no "image:" line to change');
  return manifest.replace(IMAGE_LINE, (_line, head: string) => `${head}${image}`);
}

/**
 * Creates `<dir>/repos/demo.git`, serves it with push enabled, clones it into `<dir>/work`, commits the
 * seed files and pushes them with the real git CLI, as a user would.
 */
export async function createDemoRepository(options: CreateDemoRepositoryOptions): Promise<DemoRepository> {
  const reposDir = join(options.dir, 'repos');
  const bareDir = join(reposDir, 'demo.git');
  const workDir = join(options.dir, 'work');
  await mkdir(bareDir, { recursive: true });
  await git(bareDir, ['init', '--bare', '--quiet', '--initial-branch=main']);
  // Ask git where its helpers live (Debian: /usr/lib/git-core; macOS and others differ).
  const httpBackend = join(await git(options.dir, ['--exec-path']), 'git-http-backend');
  const server: GitServer = await serveGitRepositories({
    root: reposDir,
    receivePack: true,
    ...(existsSync(httpBackend) ? { httpBackend } : {}),
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
  });
  const url = `${server.url}/demo.git`;
  try {
    await git(options.dir, ['clone', '--quiet', url, workDir]);
    await git(workDir, ['checkout', '--quiet', '-B', 'main']);
    await cp(options.seedDir, workDir, { recursive: true });
    await options.addToSeed?.(workDir);
    await git(workDir, ['add', '--all']);
    await git(workDir, ['commit', '--quiet', '-m', 'demo: first deployment']);
    await git(workDir, ['push', '--quiet', 'origin', 'HEAD:refs/heads/main']);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const rolloutPath = join(workDir, options.rolloutFile);
  async function commitAndPush(message: string): Promise<string> {
    await git(workDir, ['commit', '--quiet', '-am', message]);
    await git(workDir, ['push', '--quiet', 'origin', 'HEAD:refs/heads/main']);
    return git(workDir, ['rev-parse', 'HEAD']);
  }
  return {
    url,
    workDir,
    bareDir,
    async commitImage(image, message) {
      await writeFile(rolloutPath, replaceImage(await readFile(rolloutPath, 'utf8'), image));
      return commitAndPush(message);
    },
    async commitEdit(file, edit, message) {
      // A merged pull request may have moved main since the last push: edit on top of it, as a person would.
      await git(workDir, ['pull', '--quiet', '--ff-only', 'origin', 'main']);
      const path = join(workDir, file);
      await writeFile(path, edit(await readFile(path, 'utf8')));
      return commitAndPush(message);
    },
    async stop() {
      await server.stop();
    },
  };
}
