// A promotion's files as one commit on the base branch's tip, force-pushed to Rollgate's own branch; no work tree.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import git from 'isomorphic-git';
import type { TreeEntry } from 'isomorphic-git';
import type { Clock } from '../clock/clock.ts';
import { systemClock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { silentLogger } from '../log/logger.ts';
import { gitAuthCallbacks } from './auth-callbacks.ts';
import { isBranchName } from './branch-name.ts';
import type { GitErrorContext, GitStep } from './errors/git-error-context.ts';
import { GitPushRejectedError } from './errors/git-push-rejected.ts';
import { GitRefNotFoundError } from './errors/git-ref-not-found.ts';
import { gitErrorContext, mapGitError } from './errors/map-git-error.ts';
import { GitHttpTransport, ResponseTooLargeError } from './http-transport.ts';
import { compactPacks, countPacks } from './pack-compaction.ts';
import { DEFAULT_OBJECT_SIZE_LIMITS } from './pack-size-scan.ts';
import { fetchIndexed, packRefusal, packTooLarge } from './indexed-fetch.ts';
import { splitRemoteUrl } from './remote-url.ts';
import { serveGitRepositories } from './smart-http-server.ts';
import type { SourceAuth } from './source-auth.ts';
import { DEFAULT_FETCH_DEPTH, DEFAULT_MAX_PACKS } from './source.ts';

/** Who commits a promotion unless told otherwise (the author is the promotion's configured author). */
export const DEFAULT_PROMOTION_COMMITTER = { name: 'Rollgate', email: 'rollgate@users.noreply.invalid' };

/** What {@link pushPromotionCommit} writes and where. */
export interface PromotionCommitRequest {
  /** The target source's name, shown in errors and logs. */
  source: string;
  /** http(s) URL of the repository (credentials in it move to `auth`), or an absolute path / file:// URL. */
  url: string;
  /** The target source's credentials; never logged. */
  auth?: SourceAuth;
  /** The branch the pull request goes into (the target source's branch). */
  baseBranch: string;
  /** Rollgate's own branch, e.g. `rollgate/promote/<promotion>/<rollout>`: force-updated. */
  branch: string;
  /**
   * Commit onto the base branch itself (`branch` must then be `baseBranch`), pushed as a fast-forward, never
   * forced: for a change that needs no review branch, such as an approval written by `rollgate approve`.
   */
  fastForward?: boolean;
  /**
   * With `fastForward`: the base tip the files were read at. When the branch has moved since, nothing is
   * pushed and `git.push-rejected` is thrown, so the caller reads the files again instead of overwriting a
   * newer commit's.
   */
  expectedBase?: string;
  /** Files (repository-relative paths) as they must be on the branch; every other file is the base's. */
  files: ReadonlyArray<{ path: string; text: string }>;
  /** Files (repository-relative paths) removed from the branch; a folder left empty goes with them. */
  deletions?: readonly string[];
  message: string;
  author: { name: string; email: string };
  /** Default {@link DEFAULT_PROMOTION_COMMITTER}. */
  committer?: { name: string; email: string };
  /** Folder for the bare cache repositories (`<cacheDir>/promotion/<source>-<url digest>.git`). */
  cacheDir: string;
  clock?: Clock;
  logger?: Logger;
  /** A request whose connection stays silent this long fails as unreachable (default 30 s). */
  idleTimeoutMs?: number;
}

/**
 * `created`/`updated`: the branch was pushed (it did not exist / pointed elsewhere). `unchanged`: it already
 * holds a commit with this tree on the current base tip, nothing pushed. `in-base`: the base branch already
 * has these files, so there is nothing to propose; nothing pushed and `commit` is the base tip.
 */
export type PromotionPushOutcome = 'created' | 'updated' | 'unchanged' | 'in-base';

/** What {@link pushPromotionCommit} did. */
export interface PromotionCommitResult {
  /** The branch's commit (the base tip for `in-base`). */
  commit: string;
  /** The base branch tip the commit was built on. */
  baseCommit: string;
  /** The commit's tree. */
  tree: string;
  pushed: boolean;
  outcome: PromotionPushOutcome;
}

const REGULAR_FILE = '100644';
const EXECUTABLE_FILE = '100755';
const DIRECTORY = '040000';

/** Work on one cache repository runs one call at a time (two pushes to one cache would race on its files). */
const queues = new Map<string, Promise<unknown>>();

function exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
  const run = (queues.get(key) ?? Promise.resolve()).then(work);
  const settled = run.catch(() => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

/** A repository-relative path split into its parts; refuses absolute paths, `..`, `.git` and empty parts. */
function pathParts(path: string): string[] {
  const parts = path.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.toLowerCase() === '.git')) {
    throw new RangeError(`not a repository-relative file path: ${JSON.stringify(path)}`);
  }
  return parts;
}

function checkBranchName(name: string): void {
  if (!isBranchName(name)) throw new RangeError(`not a valid branch name: ${JSON.stringify(name)}`);
}

/** One promotion push: its cache, remote and credentials. */
class PromotionPush {
  readonly url: string;
  private readonly auth: SourceAuth | undefined;
  private readonly localPath: string | undefined;
  readonly gitdir: string;
  private readonly logger: Logger;
  private readonly transport: GitHttpTransport;
  private readonly cache: object = {};

  constructor(private readonly request: PromotionCommitRequest) {
    const { url, credentials } = splitRemoteUrl(request.url);
    this.url = url;
    if (request.url.startsWith('/')) this.localPath = request.url;
    else if (request.url.startsWith('file://')) this.localPath = fileURLToPath(request.url);
    const auth = { ...credentials, ...(request.auth ?? {}) };
    this.auth = auth.username || auth.password || auth.token ? auth : undefined;
    const digest = createHash('sha256').update(url).digest('hex').slice(0, 12);
    const name = `${request.source.replace(/[^A-Za-z0-9._-]/g, '_')}-${digest}.git`;
    this.gitdir = join(request.cacheDir, 'promotion', name);
    this.logger = (request.logger ?? silentLogger).child({
      source: request.source,
      url,
      branch: request.branch,
    });
    // The target repository is as untrusted as any source: its packs are size-checked the same way.
    this.transport = new GitHttpTransport(
      request.clock ?? systemClock,
      undefined,
      request.idleTimeoutMs,
      DEFAULT_OBJECT_SIZE_LIMITS.maxPackBytes,
    );
  }

  async run(): Promise<PromotionCommitResult> {
    const { request } = this;
    checkBranchName(request.baseBranch);
    checkBranchName(request.branch);
    if (request.fastForward === true && request.baseBranch !== request.branch) {
      throw new RangeError('a fast-forward push goes to the base branch itself');
    }
    if (request.fastForward !== true && request.baseBranch === request.branch) {
      throw new RangeError('the promotion branch must not be the base branch');
    }
    for (const file of request.files) pathParts(file.path);
    for (const path of request.deletions ?? []) pathParts(path);
    if (this.localPath === undefined) return this.push(this.url);
    const server = await serveGitRepositories({
      root: dirname(this.localPath),
      receivePack: true,
      logger: this.logger,
    });
    try {
      return await this.push(`${server.url}/${encodeURIComponent(basename(this.localPath))}`);
    } finally {
      await server.stop();
    }
  }

  private async push(remote: string): Promise<PromotionCommitResult> {
    const { request } = this;
    await this.ensureCache(remote);
    const baseRef = `refs/heads/${request.baseBranch}`;
    const branchRef = `refs/heads/${request.branch}`;
    const advertised = await this.remoteHeads(remote, request.fastForward ? [baseRef] : [baseRef, branchRef]);
    const advertisedBase = advertised.get(baseRef);
    if (advertisedBase === undefined) {
      throw new GitRefNotFoundError(`branch ${request.baseBranch} not found`, this.context('ref-check'));
    }
    if (
      request.fastForward &&
      request.expectedBase !== undefined &&
      advertisedBase !== request.expectedBase
    ) {
      throw new GitPushRejectedError(
        `branch ${request.baseBranch} moved to ${advertisedBase.slice(0, 12)} since the files were read at ${request.expectedBase.slice(0, 12)}`,
        this.context('push'),
      );
    }
    const baseCommit = await this.fetchIfMissing(remote, request.baseBranch, advertised.get(baseRef));
    await this.rememberBase(baseCommit);
    const baseTree = (await this.readCommit(baseCommit, 'commit')).tree;
    const tree = await this.step('commit', () => this.writeFiles(baseTree));
    if (tree === baseTree) {
      this.logger.info({ base: baseCommit }, 'the base branch already has these files: nothing to push');
      return { commit: baseCommit, baseCommit, tree, pushed: false, outcome: 'in-base' };
    }
    if (request.fastForward) return this.pushFastForward(remote, tree, baseCommit);
    const current = advertised.get(branchRef);
    if (current !== undefined) {
      const existing = await this.fetchIfMissing(remote, request.branch, current).then(
        (oid) => this.readCommit(oid, 'fetch'),
        (error: unknown) => {
          // Deleted since the ref check: the push creates it again.
          if (error instanceof GitRefNotFoundError) return undefined;
          throw error;
        },
      );
      if (existing?.tree === tree && existing.parent.length === 1 && existing.parent[0] === baseCommit) {
        this.logger.info({ commit: current, base: baseCommit }, 'promotion branch already up to date');
        return { commit: current, baseCommit, tree, pushed: false, outcome: 'unchanged' };
      }
    }
    const commit = await this.step('commit', () => this.writeCommit(tree, baseCommit));
    await this.step('push', async () => {
      await git.writeRef({ fs, gitdir: this.gitdir, ref: branchRef, value: commit, force: true });
      await git.push({
        fs,
        http: this.transport,
        gitdir: this.gitdir,
        url: remote,
        ref: branchRef,
        remoteRef: branchRef,
        force: true,
        cache: this.cache,
        ...gitAuthCallbacks(this.auth),
      });
    });
    const outcome = current === undefined ? 'created' : 'updated';
    this.logger.info({ commit, base: baseCommit, previous: current, outcome }, 'promotion branch pushed');
    return { commit, baseCommit, tree, pushed: true, outcome };
  }

  /** Commits onto the base tip and pushes the base branch without force: the remote refuses if it moved. */
  private async pushFastForward(
    remote: string,
    tree: string,
    baseCommit: string,
  ): Promise<PromotionCommitResult> {
    const baseRef = `refs/heads/${this.request.baseBranch}`;
    const commit = await this.step('commit', () => this.writeCommit(tree, baseCommit));
    await this.step('push', async () => {
      await git.writeRef({ fs, gitdir: this.gitdir, ref: baseRef, value: commit, force: true });
      await git.push({
        fs,
        http: this.transport,
        gitdir: this.gitdir,
        url: remote,
        ref: baseRef,
        remoteRef: baseRef,
        force: false,
        cache: this.cache,
        ...gitAuthCallbacks(this.auth),
      });
    });
    this.logger.info({ commit, base: baseCommit }, 'base branch fast-forwarded');
    return { commit, baseCommit, tree, pushed: true, outcome: 'updated' };
  }

  private async ensureCache(remote: string): Promise<void> {
    if (!fs.existsSync(join(this.gitdir, 'HEAD'))) {
      await fs.promises.mkdir(this.gitdir, { recursive: true });
      await git.init({ fs, gitdir: this.gitdir, bare: true, defaultBranch: this.request.baseBranch });
    }
    // Fetches record remote-tracking refs through it; the URL holds no credentials.
    await git.addRemote({ fs, gitdir: this.gitdir, remote: 'origin', url: remote, force: true });
  }

  /** The remote's commit for each ref (protocol v2 `ls-refs`, one request per ref). */
  private async remoteHeads(remote: string, refs: string[]): Promise<Map<string, string | undefined>> {
    const heads = new Map<string, string | undefined>();
    for (const ref of refs) {
      const listed = await this.step('ref-check', () =>
        git.listServerRefs({
          http: this.transport,
          url: remote,
          prefix: ref,
          protocolVersion: 2,
          ...gitAuthCallbacks(this.auth),
        }),
      );
      heads.set(ref, listed.find((entry) => entry.ref === ref)?.oid);
    }
    return heads;
  }

  /** `oid` when the cache has it; otherwise fetches `branch` (shallow) and returns the fetched tip. */
  private async fetchIfMissing(remote: string, branch: string, oid: string | undefined): Promise<string> {
    if (oid !== undefined && (await this.hasCommit(oid))) return oid;
    const known = await git
      .resolveRef({ fs, gitdir: this.gitdir, ref: `refs/remotes/origin/${branch}` })
      .catch(() => undefined);
    const fetched = await this.step('fetch', async () => {
      const head = await fetchIndexed(
        {
          http: this.transport,
          gitdir: this.gitdir,
          url: remote,
          ref: branch,
          remoteRef: branch,
          singleBranch: true,
          // With an earlier tip in the cache, asking for a few commits lets the server send only new objects.
          depth: known === undefined ? 1 : DEFAULT_FETCH_DEPTH,
          tags: false,
          cache: this.cache,
          ...gitAuthCallbacks(this.auth),
        },
        {
          limits: DEFAULT_OBJECT_SIZE_LIMITS,
          refuse: (problem, pack) =>
            packRefusal(problem, pack, DEFAULT_OBJECT_SIZE_LIMITS, this.context('fetch'), oid),
        },
      );
      if (!head) throw new GitRefNotFoundError(`branch ${branch} not found`, this.context('fetch'));
      return head;
    });
    await git.writeRef({
      fs,
      gitdir: this.gitdir,
      ref: `refs/remotes/origin/${branch}`,
      value: fetched,
      force: true,
    });
    if ((await countPacks(this.gitdir)) > DEFAULT_MAX_PACKS) {
      await compactPacks(this.gitdir, [fetched]).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'cache pack compaction failed');
      });
    }
    return fetched;
  }

  /**
   * Marks the base tip as the remote's default branch in the cache: isomorphic-git then leaves out of the
   * pushed pack every object the base already has, so a push costs the changed files, not the snapshot.
   */
  private async rememberBase(baseCommit: string): Promise<void> {
    const ref = `refs/remotes/origin/${this.request.baseBranch}`;
    await git.writeRef({ fs, gitdir: this.gitdir, ref, value: baseCommit, force: true });
    await git.writeRef({
      fs,
      gitdir: this.gitdir,
      ref: 'refs/remotes/origin/HEAD',
      value: ref,
      symbolic: true,
      force: true,
    });
  }

  private async hasCommit(oid: string): Promise<boolean> {
    return git.readCommit({ fs, gitdir: this.gitdir, oid, cache: this.cache }).then(
      () => true,
      () => false,
    );
  }

  private async readCommit(oid: string, step: GitStep): Promise<{ tree: string; parent: string[] }> {
    const { commit } = await this.step(step, () =>
      git.readCommit({ fs, gitdir: this.gitdir, oid, cache: this.cache }),
    );
    return commit;
  }

  /** Writes the files' blobs and every tree on their paths, without the deleted files; returns the new root tree. */
  private async writeFiles(baseTree: string): Promise<string> {
    const blobs = new Map<string, string | null>();
    for (const path of this.request.deletions ?? []) blobs.set(pathParts(path).join('/'), null);
    for (const file of this.request.files) {
      const oid = await git.writeBlob({ fs, gitdir: this.gitdir, blob: Buffer.from(file.text, 'utf8') });
      blobs.set(pathParts(file.path).join('/'), oid);
    }
    return (await this.writeDirectory(baseTree, '', blobs)) ?? (await this.emptyTree());
  }

  private emptyTree(): Promise<string> {
    return git.writeTree({ fs, gitdir: this.gitdir, tree: [] });
  }

  /**
   * One directory: the base's entries with the changed files and subdirectories replaced, and the deleted
   * ones (`null`) removed; `undefined` when nothing is left in it (Git keeps no empty folder).
   */
  private async writeDirectory(
    treeOid: string | undefined,
    prefix: string,
    blobs: Map<string, string | null>,
  ): Promise<string | undefined> {
    const entries: TreeEntry[] =
      treeOid === undefined
        ? []
        : (await git.readTree({ fs, gitdir: this.gitdir, oid: treeOid, cache: this.cache })).tree;
    const byName = new Map(entries.map((entry) => [entry.path, entry]));
    const subdirectories = new Map<string, Map<string, string | null>>();
    for (const [path, oid] of blobs) {
      const slash = path.indexOf('/');
      if (slash === -1) {
        const existing = byName.get(path);
        if (existing !== undefined && existing.type !== 'blob') {
          throw new RangeError(
            `${prefix}${path} is a ${existing.type === 'tree' ? 'directory' : 'submodule'}`,
          );
        }
        if (oid === null) {
          byName.delete(path);
          continue;
        }
        // An executable stays executable; anything else (a new file, a symlink replaced by text) is a file.
        const mode = existing?.mode === EXECUTABLE_FILE ? EXECUTABLE_FILE : REGULAR_FILE;
        byName.set(path, { mode, path, oid, type: 'blob' });
        continue;
      }
      const name = path.slice(0, slash);
      const inside = subdirectories.get(name) ?? new Map<string, string | null>();
      inside.set(path.slice(slash + 1), oid);
      subdirectories.set(name, inside);
    }
    for (const [name, inside] of subdirectories) {
      const existing = byName.get(name);
      if (existing !== undefined && existing.type !== 'tree') {
        // Deleting below a path that is no folder deletes nothing; writing there cannot be done.
        if ([...inside.values()].every((oid) => oid === null)) continue;
        throw new RangeError(`${prefix}${name} is a file, not a directory`);
      }
      if (existing === undefined && [...inside.values()].every((oid) => oid === null)) continue;
      const oid = await this.writeDirectory(existing?.oid, `${prefix}${name}/`, inside);
      if (oid === undefined) byName.delete(name);
      else byName.set(name, { mode: DIRECTORY, path: name, oid, type: 'tree' });
    }
    if (byName.size === 0) return undefined;
    return git.writeTree({ fs, gitdir: this.gitdir, tree: [...byName.values()] });
  }

  private async writeCommit(tree: string, parent: string): Promise<string> {
    const { request } = this;
    const timestamp = Math.floor((request.clock ?? systemClock).now().getTime() / 1000);
    const committer = request.committer ?? DEFAULT_PROMOTION_COMMITTER;
    return git.writeCommit({
      fs,
      gitdir: this.gitdir,
      commit: {
        message: request.message.endsWith('\n') ? request.message : `${request.message}\n`,
        tree,
        parent: [parent],
        author: { ...request.author, timestamp, timezoneOffset: 0 },
        committer: { ...committer, timestamp, timezoneOffset: 0 },
      },
    });
  }

  private context(step: GitStep): GitErrorContext {
    return gitErrorContext(this.request.source, this.url, step);
  }

  /** Runs one step, turning whatever isomorphic-git or the network throws into a typed Git error. */
  private async step<T>(step: GitStep, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.mapError(error, step);
    }
  }

  private mapError(error: unknown, step: GitStep): Error {
    if (error instanceof RangeError) return error;
    if (error instanceof ResponseTooLargeError)
      return packTooLarge(DEFAULT_OBJECT_SIZE_LIMITS, this.context(step));
    return mapGitError(error, {
      source: this.request.source,
      url: this.url,
      step,
      hasCredentials: this.auth !== undefined,
    });
  }
}

/**
 * Writes `files` as one commit on top of the base branch's tip and force-pushes it to `branch`, using a
 * bare cache repository (no work tree, no checkout): the base tip is fetched shallow when the cache does
 * not have it, blobs and the trees on the changed paths are written, everything else is the base's tree.
 * The author is the request's, the committer Rollgate.
 *
 * Idempotent: when the remote branch already holds a commit with exactly this tree whose only parent is
 * the current base tip, nothing is pushed (`unchanged`). When the base moved or the files differ, a new
 * commit on the current tip replaces the branch (force: the branch is Rollgate's own). When the base
 * already has these files nothing is pushed (`in-base`).
 *
 * Errors are the Git source errors (`git.auth-failed`, `git.repository-not-found`, `git.ref-not-found` for a
 * missing base branch, `git.unreachable`, `git.protocol`) plus `git.push-rejected`; credentials never
 * appear in them or in logs. Calls for one repository run one at a time.
 */
export async function pushPromotionCommit(request: PromotionCommitRequest): Promise<PromotionCommitResult> {
  const push = new PromotionPush(request);
  return exclusive(push.gitdir, () => push.run());
}
