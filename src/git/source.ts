// A Git source: one-request change check, shallow single-branch fetch, and a per-object manifest diff.
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import git from 'isomorphic-git';
import type { FsClient, HttpClient, ServerRef } from 'isomorphic-git';
import type { Clock } from '../clock/clock.ts';
import { systemClock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { silentLogger } from '../log/logger.ts';
import type { RenderMode } from '../render/app-discovery.ts';
import type { EditedAppRender } from '../render/edited-apps.ts';
import type { EditedFile } from '../render/edited-tree.ts';
import type { RenderOutcome } from '../render/renderer.ts';
import { RenderCache } from '../render/render-cache.ts';
import type { Rendering } from '../render/rendering.ts';
import type { GitErrorContext, GitStep } from './errors/git-error-context.ts';
import { GitObjectMissingError } from './errors/git-object-missing.ts';
import { GitObjectTooLargeError } from './errors/git-object-too-large.ts';
import { GitRefNotFoundError } from './errors/git-ref-not-found.ts';
import { gitErrorContext, mapGitError } from './errors/map-git-error.ts';
import { gitAuthCallbacks } from './auth-callbacks.ts';
import type { SourceAuth } from './source-auth.ts';
import { GitHttpTransport, ResponseTooLargeError } from './http-transport.ts';
import { compareManifests, sortDiff } from './manifest-diff.ts';
import type { ManifestChange, ManifestDiff } from './manifest-diff.ts';
import { parseFiles, splitFirstPart } from './manifest-stages.ts';
import type { FileTexts, FirstPartRule } from './manifest-stages.ts';
import type { ManifestProblem } from './manifest-parser.ts';
import { specManifestParser } from './manifest-parser.ts';
import { ObjectMemory } from './object-memory.ts';
import { CacheSiblings } from './cache-siblings.ts';
import { compactPacks, countPacks } from './pack-compaction.ts';
import type { PackCompaction } from './pack-compaction.ts';
import type { CommitSummary } from './object-memory.ts';
import { DEFAULT_OBJECT_SIZE_LIMITS } from './pack-size-scan.ts';
import type { ObjectSizeLimits } from './pack-size-scan.ts';
import { readSnapshotFs } from './read-snapshot-fs.ts';
import { fetchIndexed, packRefusal, packTooLarge } from './indexed-fetch.ts';
import { splitRemoteUrl } from './remote-url.ts';
import { serveGitRepositories } from './smart-http-server.ts';
import type { GitServer } from './smart-http-server.ts';
import { diffTargets, isManifestPath, normalizeSourcePath, resolvePath } from './tree-diff.ts';
import { plainFileChanges } from './plain-file-changes.ts';
import type { ChangedApps } from '../render/changed-apps.ts';
import type { FileChange, ObjectReader, TreeEntry } from './tree-diff.ts';

/** A Git source as configured: which repository, branch and folder Rollgate follows. */
export interface Source {
  name: string;
  /**
   * http(s) URL of the repository (credentials in it are moved to `auth` and never logged), or an
   * absolute local path / file:// URL, which is served in-process over smart HTTP (see `close()`).
   */
  url: string;
  branch: string;
  /** Folder (or single file) inside the repository; `.` or `` for the whole repository. */
  path: string;
  auth?: SourceAuth;
  /**
   * How the path is read (docs/sources.md, "Rendering"): `auto` renders the kustomizations found under
   * it and reads the other YAML as plain manifests, `kustomize` renders the path's kustomization,
   * `plain` reads YAML only. Without {@link GitSourceOptions.rendering}, always `plain`.
   */
  render?: RenderMode;
}

/** Options of {@link GitSource}. */
export interface GitSourceOptions {
  /** Folder holding one bare cache repository per source (`<cacheDir>/<source name>.git`). */
  cacheDir: string;
  logger?: Logger;
  clock?: Clock;
  /** A request whose connection stays silent this long fails as unreachable (default 30 s). */
  idleTimeoutMs?: number;
  /**
   * History depth asked for on fetches after the first (default {@link DEFAULT_FETCH_DEPTH}). When more
   * commits than this were pushed between two fetches, the fetch costs one full snapshot instead of the
   * changes only; it never downloads more history than this.
   */
  fetchDepth?: number;
  /**
   * Each fetch that brings something adds a pack to the cache; past this many they are compacted into
   * one holding the trees of the last {@link KEPT_FETCHED_COMMITS} fetched commits (default
   * {@link DEFAULT_MAX_PACKS}). A diff from a commit older than those becomes a full diff.
   */
  maxPacks?: number;
  /**
   * Largest object and pack a fetch accepts (default {@link DEFAULT_OBJECT_SIZE_LIMITS}); checked before
   * anything is inflated, see {@link GitObjectTooLargeError}.
   */
  objectLimits?: Partial<ObjectSizeLimits>;
  /** The process's renderers (kustomize), shared by its sources; without it every source reads plain YAML. */
  rendering?: Rendering;
  /**
   * The process's other sources: a first fetch copies the cache of one that follows the same branch with
   * the same credentials and already holds the wanted commit (see {@link CacheSiblings}).
   */
  siblings?: CacheSiblings;
}

/** Packs a cache may hold before they are compacted into one; see {@link GitSourceOptions.maxPacks}. */
export const DEFAULT_MAX_PACKS = 32;

/** How many recently fetched commits a compaction keeps (the last synced commit is normally among them). */
export const KEPT_FETCHED_COMMITS = 8;

/** Commits asked for on incremental fetches; see {@link GitSourceOptions.fetchDepth}. */
export const DEFAULT_FETCH_DEPTH = 20;

/** How the new commit relates to the one it is compared with. */
export type HistoryRelation = 'initial' | 'same' | 'fast-forward' | 'rewritten' | 'unknown';

/** Everything a diff found; {@link GitSource.diff} returns only `changes`. */
export interface SourceDiff {
  source: string;
  from?: string;
  to: string;
  /**
   * `incremental`: compared with `from`'s tree. `full`: `from` was not given or is not in the cache, so
   * every object at `to` is reported added (nothing can be reported removed).
   */
  basis: 'incremental' | 'full';
  history: HistoryRelation;
  changes: ManifestChange[];
  problems: ManifestProblem[];
  /** Manifest files whose blob differs. */
  files: FileChange[];
  /**
   * Objects the diff looked at (what "skipping equal subtrees" saves): commits, trees and blobs asked
   * for, and how many of those trees and commits were answered from memory instead of the object store.
   */
  reads: { commits: number; trees: number; blobs: number; fromMemory: number };
  /**
   * Apps (kustomizations) compared: renderer processes run, renders answered from the cache, and apps
   * whose inputs were equal on both sides (not rendered). Absent for a plain source.
   */
  renders?: { renders: number; cacheHits: number; unchanged: number };
}

/** What a diff says besides its changes and problems. */
export type SourceDiffHeader = Omit<SourceDiff, 'changes' | 'problems'>;

/** A diff in two parts; see {@link GitSource.diffInParts}. */
export interface SourceDiffInParts extends SourceDiffHeader {
  first: ManifestDiff;
  rest(): Promise<ManifestDiff>;
}

/** How many locally present ancestors are walked to tell a fast-forward from a rewrite. */
const HISTORY_WALK_LIMIT = 200;

/**
 * Bytes of each app's last good render a source keeps (by the app's kustomization path). An app whose
 * old side no longer renders is compared with it, so that what left Git while the app did not render is
 * still pruned once it renders again.
 */
const LAST_GOOD_RENDER_BYTES = 32 * 1024 * 1024;

/**
 * One Git source with its own bare cache repository. All remote access goes through isomorphic-git over
 * http(s); credentials reach the server only through isomorphic-git's onAuth callback.
 */
export class GitSource {
  readonly name: string;
  /** The remote URL without credentials: what logs and errors show. */
  readonly url: string;
  readonly branch: string;
  readonly path: string;
  readonly gitdir: string;
  private readonly auth: SourceAuth | undefined;
  private readonly logger: Logger;
  private readonly transport: GitHttpTransport;
  private cache: object = {};
  private memory = new ObjectMemory();
  private readonly fetchDepth: number;
  private initialized = false;
  /** See {@link cachedTip}. */
  private tip: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly maxPacks: number;
  private readonly objectLimits: ObjectSizeLimits;
  /** Set for a local repository path: it is served in-process over smart HTTP like any remote. */
  private readonly localPath: string | undefined;
  private localServer: Promise<GitServer> | undefined;
  private readonly rendering: Rendering | undefined;
  /** Each app's last good render, for an old side that fails (see {@link LAST_GOOD_RENDER_BYTES}). */
  private readonly lastGoodRenders = new RenderCache(LAST_GOOD_RENDER_BYTES);
  /** How the path is read; `plain` without a rendering. */
  readonly renderMode: RenderMode;
  private readonly siblings: { group: CacheSiblings; key: string; leave: () => void } | undefined;

  constructor(
    readonly source: Source,
    options: GitSourceOptions,
  ) {
    const { url, credentials } = splitRemoteUrl(source.url);
    this.name = source.name;
    this.url = url;
    if (source.url.startsWith('/')) this.localPath = source.url;
    else if (source.url.startsWith('file://')) this.localPath = fileURLToPath(source.url);
    this.branch = source.branch;
    this.path = normalizeSourcePath(source.path);
    this.gitdir = join(options.cacheDir, `${source.name.replace(/[^A-Za-z0-9._-]/g, '_')}.git`);
    const auth = { ...credentials, ...(source.auth ?? {}) };
    this.auth = auth.username || auth.password || auth.token ? auth : undefined;
    this.logger = (options.logger ?? silentLogger).child({ source: source.name, url });
    this.objectLimits = { ...DEFAULT_OBJECT_SIZE_LIMITS, ...(options.objectLimits ?? {}) };
    const makeTransport = (): GitHttpTransport =>
      new GitHttpTransport(
        options.clock ?? systemClock,
        undefined,
        options.idleTimeoutMs,
        this.objectLimits.maxPackBytes,
      );
    this.fetchDepth = options.fetchDepth ?? DEFAULT_FETCH_DEPTH;
    this.maxPacks = options.maxPacks ?? DEFAULT_MAX_PACKS;
    this.rendering = options.rendering;
    this.renderMode = options.rendering === undefined ? 'plain' : (source.render ?? 'auto');
    if (options.siblings !== undefined) {
      const key = CacheSiblings.keyOf(this.localPath ?? this.url, this.branch, this.auth);
      this.siblings = { group: options.siblings, key, leave: options.siblings.join(key, this) };
      this.transport = options.siblings.transportOf(key, makeTransport);
    } else {
      this.transport = makeTransport();
    }
  }

  /** The branch tip of the cache as last read or fetched (undefined before the first look). */
  get knownTip(): string | undefined {
    return this.tip;
  }

  /**
   * Copies this cache's objects, shallow list and fetch record into `gitdir` (a sibling's empty cache)
   * when this cache's tip is `commit`. Under this cache's lock: no fetch or compaction is half done.
   * Packs are never changed once written (a compaction writes new ones), so the copy is a snapshot.
   */
  async copyCacheTo(gitdir: string, commit: string): Promise<boolean> {
    return this.exclusive(async () => {
      if ((await this.cachedTip()) !== commit) return false;
      await fs.promises.cp(join(this.gitdir, 'objects'), join(gitdir, 'objects'), { recursive: true });
      for (const file of ['shallow', 'rollgate-fetched']) {
        await fs.promises.copyFile(join(this.gitdir, file), join(gitdir, file)).catch((error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        });
      }
      return true;
    });
  }

  /** The renderer and version kustomize apps are rendered with; undefined for a plain source. */
  get renderer(): { renderer: string; version: string } | undefined {
    return this.renderMode === 'plain' ? undefined : this.rendering?.identity;
  }

  /** Stops the in-process server of a local-path source; a no-op for remote sources. */
  async close(): Promise<void> {
    this.siblings?.leave();
    const server = this.localServer;
    this.localServer = undefined;
    if (server) await (await server).stop();
  }

  /** The URL isomorphic-git talks to: the remote's, or the in-process server's for a local path. */
  private async remoteUrl(): Promise<string> {
    if (this.localPath === undefined) return this.url;
    if (!this.localServer) {
      this.localServer = serveGitRepositories({ root: dirname(this.localPath), logger: this.logger });
      this.localServer.catch(() => {
        this.localServer = undefined;
      });
    }
    return `${(await this.localServer).url}/${encodeURIComponent(basename(this.localPath))}`;
  }

  /** HTTP requests this source's transport (shared with its siblings) sent over the network. */
  get requestCount(): number {
    return this.transport.requestCount;
  }

  /**
   * The branch's commit on the remote, or undefined when the branch does not exist. One protocol v2
   * `ls-refs` request (the capability advertisement before it is remembered after the first call).
   */
  async remoteHead(): Promise<string | undefined> {
    const ref = `refs/heads/${this.branch}`;
    const list = async (): Promise<ServerRef[]> =>
      git.listServerRefs({
        http: this.transport,
        url: await this.remoteUrl(),
        prefix: ref,
        protocolVersion: 2,
        ...gitAuthCallbacks(this.auth),
      });
    try {
      // Siblings (same URL, branch and credentials) asking at once share one request.
      const refs = await (this.siblings ? this.siblings.group.refCheck(this.siblings.key, list) : list());
      const head = refs.find((r) => r.ref === ref)?.oid;
      this.logger.debug({ head }, 'remote head checked');
      return head;
    } catch (error) {
      throw this.mapError(error, 'ref-check');
    }
  }

  /**
   * Fetches only the branch, without tags, into the cache; returns the fetched commit. The first fetch
   * is shallow (depth 1); later ones offer the previous tip and ask for at most `fetchDepth` commits, so
   * only new objects travel. Older commits already in the cache are kept for the next diff. Calls on one
   * GitSource run one at a time.
   *
   * `knownHead`: the branch's commit as a ref check just returned it. The fetch then does not ask the
   * remote for the branch again (see {@link GitHttpTransport.withKnownTip}): one request instead of two,
   * none when the commit is already the cached branch tip. It returns that commit, even when the branch
   * has moved on since (the caller decides which commit is newest). When the remote no longer has it
   * (force-pushed away), the fetch asks for the branch and returns its current commit.
   */
  async fetch(options: { knownHead?: string } = {}): Promise<string> {
    const { knownHead } = options;
    return this.exclusive(async () => {
      const previous = await this.cachedTip();
      if (knownHead === undefined) return this.fetchOnce(this.transport, previous);
      if (previous === knownHead) return knownHead;
      if (previous === undefined && (await this.seededFromSibling(knownHead))) return knownHead;
      try {
        const tip = this.transport.withKnownTip(`refs/heads/${this.branch}`, knownHead);
        const download = (): Promise<string> => this.fetchOnce(tip, previous, knownHead);
        const fetched =
          previous === undefined && this.siblings !== undefined
            ? await this.siblings.group.firstFetch(this.siblings.key, knownHead, download)
            : await download();
        if (fetched === knownHead) return fetched;
      } catch (error) {
        // Fetching the branch again would bring the same object.
        if (error instanceof GitObjectTooLargeError) throw error;
        this.logger.debug({ knownHead, err: (error as Error).message }, 'fetch of the known head refused');
      }
      return this.fetchOnce(this.transport, await this.cachedTip());
    });
  }

  /**
   * A first fetch of a commit a sibling's cache already holds: its objects are copied, nothing is asked of
   * the remote (this source's own ref check just saw `knownHead` there, with its own credentials). A
   * failed copy leaves the cache as a first fetch would find it.
   */
  private async seededFromSibling(knownHead: string): Promise<boolean> {
    if (this.siblings === undefined) return false;
    try {
      if (!(await this.siblings.group.seed(this.siblings.key, this, this.gitdir, knownHead))) return false;
      await git.writeRef({
        fs,
        gitdir: this.gitdir,
        ref: `refs/heads/${this.branch}`,
        value: knownHead,
        force: true,
      });
      await git.readCommit({ fs, gitdir: this.gitdir, oid: knownHead, cache: this.cache });
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, "copy of a sibling source's cache failed");
      await fs.promises.rm(this.gitdir, { recursive: true, force: true });
      this.initialized = false;
      this.cache = {};
      await this.ensureCache();
      return false;
    }
    this.tip = knownHead;
    this.logger.debug({ head: knownHead }, "first fetch taken from a sibling source's cache");
    return true;
  }

  /**
   * The branch tip in the cache (the last fetched commit), if any. Read from disk once, then kept in
   * memory: only this GitSource writes the cache, and a file read costs milliseconds on a busy machine.
   */
  private async cachedTip(): Promise<string | undefined> {
    await this.ensureCache();
    this.tip ??= await git
      .resolveRef({ fs, gitdir: this.gitdir, ref: `refs/heads/${this.branch}` })
      .catch(() => undefined);
    return this.tip;
  }

  /**
   * Runs cache work one operation at a time: two fetches into one cache at once (a scheduled poll and a
   * webhook poll) would race on its files, and a diff must not read packs a compaction is replacing.
   */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    // The tail holds nothing of the result: a diff of thousands of objects would otherwise stay in memory
    // until this source's next Git operation (for an idle source, for good).
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Fetches the branch: the tip alone on the first fetch, else up to `fetchDepth` commits. When the
   * commits since `previous` bring an object over the limit, the tip alone is fetched instead (its tree,
   * not the commits in between): a file added and removed again then no longer stops the source, which
   * would otherwise stay stuck until the commit that added it is `fetchDepth` commits old.
   */
  private async fetchOnce(http: HttpClient, previous: string | undefined, wanted?: string): Promise<string> {
    if (previous === undefined) return this.fetchPack(http, 1, wanted);
    try {
      return await this.fetchPack(http, this.fetchDepth, wanted);
    } catch (error) {
      if (!(error instanceof GitObjectTooLargeError) || error.detail.what === 'pack') throw error;
      this.logger.info(
        { previous, wanted, oid: error.detail.oid },
        'an object over the limit is in the fetched history: fetching the branch tip alone',
      );
      return this.fetchPack(http, 1, wanted);
    }
  }

  private async fetchPack(http: HttpClient, depth: number, wanted: string | undefined): Promise<string> {
    const restore = await this.keepFetchState();
    try {
      // The pack is size-checked and indexed by Rollgate, not by isomorphic-git; see fetchIndexed.
      const head = await fetchIndexed(
        {
          http,
          gitdir: this.gitdir,
          url: await this.remoteUrl(),
          ref: this.branch,
          remoteRef: this.branch,
          singleBranch: true,
          // The first fetch takes the tip alone. Later ones ask for up to `fetchDepth` commits: the server
          // then finds our previous tip among them and sends only new objects (with depth 1 it would send
          // the whole snapshot again, since a depth-1 tip has no parent linking it to what we have).
          depth,
          tags: false,
          cache: this.cache,
          ...gitAuthCallbacks(this.auth),
        },
        {
          limits: this.objectLimits,
          refuse: async (problem, pack) => {
            const error = await packRefusal(problem, pack, this.objectLimits, this.context('fetch'), wanted);
            if (error instanceof GitObjectTooLargeError)
              this.logger.warn({ ...error.detail }, 'fetch refused: object too large');
            return error;
          },
        },
      );
      if (!head) {
        throw new GitRefNotFoundError(`branch ${this.branch} not found`, this.context('fetch'));
      }
      // A server refusing a wanted commit may answer without a pack rather than with an error.
      await git
        .readCommit({ fs, gitdir: this.gitdir, oid: head, cache: this.cache })
        .catch((error: unknown) => {
          throw new GitObjectMissingError(
            `fetched commit ${head} is not in the cache`,
            this.context('fetch'),
            {
              cause: error,
            },
          );
        });
      // isomorphic-git offers the local branch as "have" on the next fetch; without it every fetch would
      // download the whole snapshot again.
      await git.writeRef({
        fs,
        gitdir: this.gitdir,
        ref: `refs/heads/${this.branch}`,
        value: head,
        force: true,
      });
      this.tip = head;
      this.logger.debug({ head }, 'fetched');
      await this.rememberFetched(head);
      return head;
    } catch (error) {
      await restore().catch((failure: unknown) =>
        this.logger.warn({ err: failure }, 'could not restore the cache after a failed fetch'),
      );
      if (error instanceof ResponseTooLargeError)
        throw packTooLarge(this.objectLimits, this.context('fetch'), wanted);
      throw this.mapError(error, 'fetch');
    }
  }

  /**
   * isomorphic-git writes the `shallow` list and the remote-tracking ref before it receives the pack.
   * When the pack is then refused (too large) or never arrives, those would name a commit the cache does
   * not have, and the next fetch would offer it as "have": the server would send nothing for it. This
   * reads both before a fetch and returns what puts them back.
   */
  private async keepFetchState(): Promise<() => Promise<void>> {
    const files = [join(this.gitdir, 'shallow'), join(this.gitdir, 'refs', 'remotes', 'origin', this.branch)];
    const before = await Promise.all(files.map((file) => fs.promises.readFile(file).catch(() => undefined)));
    return async () => {
      await Promise.all(
        files.map((file, i) => {
          const content = before[i];
          return content === undefined
            ? fs.promises.rm(file, { force: true })
            : fs.promises.writeFile(file, content);
        }),
      );
    };
  }

  /** Records the fetched commit and compacts the cache's packs when there are too many. */
  private async rememberFetched(head: string): Promise<void> {
    const file = join(this.gitdir, 'rollgate-fetched');
    const previous = (await fs.promises.readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const recent = [head, ...previous.filter((commit) => commit !== head)].slice(0, KEPT_FETCHED_COMMITS);
    await fs.promises.writeFile(file, `${recent.join('\n')}\n`);
    if ((await countPacks(this.gitdir)) <= this.maxPacks) return;
    let result: PackCompaction;
    try {
      result = await compactPacks(this.gitdir, recent);
    } catch (error) {
      // The fetch itself succeeded; an uncompacted cache is only slower. Try again after the next fetch.
      this.logger.warn({ err: error }, 'cache pack compaction failed');
      return;
    }
    // Pack indexes of deleted packs, and trees of commits no longer kept, must not be used again.
    this.cache = {};
    this.memory = new ObjectMemory();
    this.logger.info(
      { packsBefore: result.packsBefore, objects: result.objects, kept: result.kept.length },
      'cache packs compacted',
    );
  }

  /**
   * Fetches the branch with `depth` commits of history (a first fetch takes the tip alone): for a reader
   * that needs a recent commit's parent, such as a revert of an aborted commit. Returns the tip.
   */
  async fetchHistory(depth: number): Promise<string> {
    return this.exclusive(() => this.fetchPack(this.transport, depth, undefined));
  }

  /**
   * True when `ancestor` is on the first-parent chain of `descendant` within the cache (no network):
   * `descendant` was built on top of it, so `ancestor` is the older of the two. False when unknown.
   */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    if (ancestor === descendant) return false;
    return this.exclusive(async () => {
      const reads = { commits: 0, trees: 0, blobs: 0, fromMemory: 0 };
      return (await this.relation(ancestor, descendant, reads, readSnapshotFs())) === 'fast-forward';
    });
  }

  /**
   * Who wrote `commit` (fetched before), from the cache; no network. Undefined when the commit is not
   * there: the author is shown where known and is never a reason for a sync to fail.
   */
  async commitAuthor(commit: string): Promise<{ name: string; email: string } | undefined> {
    return this.exclusive(async () => {
      try {
        const { commit: read } = await git.readCommit({
          fs: readSnapshotFs(),
          gitdir: this.gitdir,
          oid: commit,
          cache: this.cache,
        });
        return { name: read.author.name, email: read.author.email };
      } catch {
        return undefined;
      }
    });
  }

  /**
   * The text of `path` (repository-relative) at `commit` (fetched before), from the cache; no network.
   * Undefined when the file did not exist then or the commit is not in the cache: what a fleet's hold
   * reads to apply a Rollout at the revision released to this cluster (src/sync/held-rollouts.ts).
   */
  async readFileAt(commit: string, path: string): Promise<string | undefined> {
    return this.exclusive(async () => {
      try {
        const { blob } = await git.readBlob({
          fs: readSnapshotFs(),
          gitdir: this.gitdir,
          oid: commit,
          filepath: path,
          cache: this.cache,
        });
        return new TextDecoder().decode(blob);
      } catch {
        return undefined;
      }
    });
  }

  /** Per-object changes between two commits under the source's path (see {@link diffReport}). */
  async diff(from: string | undefined, to: string): Promise<ManifestChange[]> {
    return (await this.diffReport(from, to)).changes;
  }

  /**
   * Diffs `from` (the last synced commit) and `to` (a fetched commit) under the source's path by walking
   * both trees and skipping every subtree whose id is equal; only blobs of changed `.yaml`/`.yml` files
   * are read. Force-pushes and unrelated histories need nothing special: the comparison is always
   * tree-to-tree against the last synced commit, as long as it is still in the cache. When it is not
   * (first sync, new cache), every object at `to` is reported added.
   */
  async diffReport(from: string | undefined, to: string): Promise<SourceDiff> {
    return this.exclusive(() => this.diffOnce(from, to));
  }

  /**
   * The kustomization in `dir` (a repository path) rendered at `commit` (fetched before), with the
   * preflight, limits and cache of a sync: what a promotion's render check and `rollgate plan` ask.
   * Undefined when `dir` holds no kustomization or the source has no rendering.
   */
  async renderApp(commit: string, dir: string): Promise<RenderOutcome | undefined> {
    const rendering = this.rendering;
    if (rendering === undefined) return undefined;
    return this.exclusive(async () => {
      const reads = { commits: 0, trees: 0, blobs: 0, fromMemory: 0 };
      const snapshot = readSnapshotFs();
      try {
        const tree = await this.treeOf(commit, reads, snapshot);
        return await rendering.renderApp(this.objectReader(reads, snapshot), tree, normalizeSourcePath(dir));
      } catch (error) {
        throw this.mapError(error, 'diff');
      }
    });
  }

  /**
   * The apps under the source's path that read one of `files`, rendered at `commit` (fetched before) with
   * `files` written over it, nothing committed: a promotion's render check before it opens a pull
   * request. `rendering` defaults to the source's own; none, or a `plain` source: nothing is rendered.
   */
  async renderEdits(
    commit: string,
    files: readonly EditedFile[],
    rendering: Rendering | undefined = this.rendering,
  ): Promise<EditedAppRender[]> {
    const mode = this.source.render ?? 'auto';
    if (rendering === undefined || mode === 'plain') return [];
    return this.exclusive(async () => {
      const reads = { commits: 0, trees: 0, blobs: 0, fromMemory: 0 };
      const snapshot = readSnapshotFs();
      try {
        const tree = await this.treeOf(commit, reads, snapshot);
        const edits = files.map((file) => ({ path: normalizeSourcePath(file.path), text: file.text }));
        return await rendering.editedApps(this.objectReader(reads, snapshot), tree, this.path, mode, edits);
      } catch (error) {
        throw this.mapError(error, 'diff');
      }
    });
  }

  /**
   * Every manifest file (`.yaml`/`.yml`) under the source's path at `commit` (fetched before), with its
   * text: what a promotion edits on the target side.
   */
  async readManifestFiles(commit: string): Promise<Array<{ path: string; text: string }>> {
    return this.exclusive(async () => {
      const reads = { commits: 0, trees: 0, blobs: 0, fromMemory: 0 };
      const snapshot = readSnapshotFs();
      const reader = this.objectReader(reads, snapshot);
      try {
        const tree = await this.treeOf(commit, reads, snapshot);
        const target = await resolvePath(reader, tree, this.path);
        const files = await diffTargets(reader, undefined, target, this.path, isManifestPath);
        const decoder = new TextDecoder();
        return await Promise.all(
          files
            .filter((file): file is FileChange & { after: string } => file.after !== undefined)
            .map(async (file) => ({
              path: file.path,
              text: decoder.decode(await reader.readBlob(file.after)),
            })),
        );
      } catch (error) {
        throw this.mapError(error, 'diff');
      }
    });
  }

  /**
   * Every file (any kind, nested folders too) at or under each of `paths` (relative to the source's path)
   * at `commit` (fetched before), with its bytes and its path relative to the source's path: what a
   * promotion's `files` copy.
   */
  async readFilesUnder(
    commit: string,
    paths: readonly string[],
  ): Promise<Array<{ path: string; bytes: Uint8Array }>> {
    if (paths.length === 0) return [];
    const prefix = this.path === '' ? '' : `${this.path}/`;
    const wanted = paths.map((path) => `${prefix}${path}`);
    const include = (path: string): boolean =>
      wanted.some((want) => path === want || path.startsWith(`${want}/`));
    return this.exclusive(async () => {
      const reads = { commits: 0, trees: 0, blobs: 0, fromMemory: 0 };
      const snapshot = readSnapshotFs();
      const reader = this.objectReader(reads, snapshot);
      try {
        const tree = await this.treeOf(commit, reads, snapshot);
        const target = await resolvePath(reader, tree, this.path);
        const files = await diffTargets(reader, undefined, target, this.path, include);
        return await Promise.all(
          files
            .filter((file): file is FileChange & { after: string } => file.after !== undefined)
            .map(async (file) => ({
              path: file.path.slice(prefix.length),
              bytes: await reader.readBlob(file.after),
            })),
        );
      } catch (error) {
        throw this.mapError(error, 'diff');
      }
    });
  }

  /**
   * {@link diffReport} in two parts: `first` compares the files that may define an object of
   * `rule.kinds` or one such an object needs (see {@link splitFirstPart}), and `rest()` the others, so
   * that a caller can write the first part while the rest is parsed. Every changed file is read before
   * this returns (a missing object fails here, before anything is written); the rest is parsed when
   * `rest()` is called. No key is in both parts.
   */
  async diffInParts(from: string | undefined, to: string, rule: FirstPartRule): Promise<SourceDiffInParts> {
    const read = await this.exclusive(() => this.readChangedFiles(from, to));
    const { texts, ...header } = read;
    const split = splitFirstPart(texts, specManifestParser, rule);
    const first = compareManifests(split.first);
    return {
      ...header,
      first,
      rest: async () => {
        const rest = compareManifests(await parseFiles(split.rest, specManifestParser));
        this.reportDiff(
          header,
          sortDiff({
            changes: [...first.changes, ...rest.changes],
            problems: [...first.problems, ...rest.problems],
          }),
        );
        return rest;
      },
    };
  }

  private async diffOnce(from: string | undefined, to: string): Promise<SourceDiff> {
    const { texts, ...header } = await this.readChangedFiles(from, to);
    const { changes, problems } = compareManifests(await parseFiles(texts, specManifestParser));
    const report: SourceDiff = { ...header, changes, problems };
    this.reportDiff(header, report);
    return report;
  }

  /** Logs what a diff found, and each manifest it skipped. */
  private reportDiff(header: SourceDiffHeader, diff: Pick<SourceDiff, 'changes' | 'problems'>): void {
    const { changes, problems } = diff;
    for (const problem of problems) {
      this.logger.warn(
        { file: problem.file, line: problem.line, key: problem.key },
        `invalid manifest skipped: ${problem.message}`,
      );
    }
    const { from, to, basis, history, reads, renders } = header;
    this.logger.info(
      {
        from,
        to,
        basis,
        history,
        changes: changes.length,
        problems: problems.length,
        reads,
        ...(renders ? { renders: renders.renders, renderCacheHits: renders.cacheHits } : {}),
      },
      'diff computed',
    );
  }

  /** The changed manifest files between two commits, with the text of both versions of each. */
  private async readChangedFiles(
    from: string | undefined,
    to: string,
  ): Promise<SourceDiffHeader & { texts: FileTexts[] }> {
    const reads = { commits: 0, trees: 0, blobs: 0, fromMemory: 0 };
    const snapshot = readSnapshotFs();
    const reader = this.objectReader(reads, snapshot);
    let toTree: string;
    try {
      toTree = await this.treeOf(to, reads, snapshot);
    } catch (error) {
      throw this.mapError(error, 'diff');
    }
    let fromTree: string | undefined;
    if (from !== undefined && from !== to) {
      fromTree = await this.treeOf(from, reads, snapshot).catch(() => undefined);
      if (fromTree === undefined) {
        this.logger.warn(
          { from, to },
          'last synced commit is not in the cache: reporting every object as added',
        );
      }
    }
    const history: HistoryRelation =
      from === undefined
        ? 'initial'
        : from === to
          ? 'same'
          : fromTree === undefined
            ? 'unknown'
            : await this.relation(from, to, reads, snapshot);
    let files: FileChange[] = [];
    let apps: ChangedApps | undefined;
    if (from !== to) {
      try {
        if (this.rendering !== undefined && this.renderMode !== 'plain') {
          const trees = fromTree === undefined ? { after: toTree } : { before: fromTree, after: toTree };
          apps = await this.rendering.changedApps(reader, trees, this.path, this.renderMode);
          this.rememberGoodRenders(apps);
        }
        files = await plainFileChanges(reader, { before: fromTree, after: toTree }, this.path, apps?.covered);
      } catch (error) {
        throw this.mapError(error, 'diff');
      }
    }
    const decoder = new TextDecoder('utf-8');
    const text = async (oid: string): Promise<string> => decoder.decode(await reader.readBlob(oid));
    const texts: FileTexts[] = [];
    try {
      for (const file of files) {
        const entry: FileTexts = { path: file.path };
        if (file.before !== undefined) entry.before = await text(file.before);
        if (file.after !== undefined) entry.after = await text(file.after);
        texts.push(entry);
      }
    } catch (error) {
      throw this.mapError(error, 'diff');
    }
    // Each app re-rendered is one "file": its kustomization, holding the rendered objects of both sides.
    texts.push(...(apps?.apps ?? []));
    files.push(...[...new Set(apps?.reread ?? [])].map((path) => ({ path })));
    const header: SourceDiffHeader & { texts: FileTexts[] } = {
      source: this.name,
      to,
      basis: from !== undefined && (fromTree !== undefined || from === to) ? 'incremental' : 'full',
      history,
      files,
      reads,
      texts,
    };
    if (from !== undefined) header.from = from;
    if (apps !== undefined) header.renders = apps.counts;
    return header;
  }

  /**
   * Keeps each app's last good render and hands it to an app whose old side failed as its `before`: the
   * objects it had then and no longer has are reported removed (pruned if the source's), instead of
   * staying for good. Lost on restart; a render that never succeeded in this process has none.
   */
  private rememberGoodRenders(apps: ChangedApps): void {
    for (const app of apps.apps) {
      if (app.oldSideFailed === true) {
        const lastGood = this.lastGoodRenders.get(app.path);
        if (lastGood !== undefined) app.before = lastGood;
        delete app.oldSideFailed;
      }
      if (app.lastGood !== undefined) {
        if (this.lastGoodRenders.get(app.path) === undefined)
          this.lastGoodRenders.set(app.path, app.lastGood);
        delete app.lastGood;
      }
      if (app.after !== undefined) this.lastGoodRenders.set(app.path, app.after);
    }
  }

  private async ensureCache(): Promise<void> {
    if (this.initialized) return;
    if (!fs.existsSync(join(this.gitdir, 'HEAD'))) {
      await fs.promises.mkdir(this.gitdir, { recursive: true });
      await git.init({ fs, gitdir: this.gitdir, bare: true, defaultBranch: this.branch });
    }
    // Rewritten on every start so a changed URL in the config is followed; the URL holds no credentials.
    await git.addRemote({
      fs,
      gitdir: this.gitdir,
      remote: 'origin',
      url: await this.remoteUrl(),
      force: true,
    });
    this.initialized = true;
  }

  private async treeOf(commit: string, reads: SourceDiff['reads'], snapshot: FsClient): Promise<string> {
    return (await this.commitSummary(commit, reads, snapshot)).tree;
  }

  private async commitSummary(
    oid: string,
    reads: SourceDiff['reads'],
    snapshot: FsClient,
  ): Promise<CommitSummary> {
    reads.commits += 1;
    const known = this.memory.commit(oid);
    if (known) {
      reads.fromMemory += 1;
      return known;
    }
    if (!fs.existsSync(this.gitdir)) {
      throw new GitObjectMissingError(`commit ${oid} is not in the cache`, this.context('diff'));
    }
    const { commit } = await git.readCommit({ fs: snapshot, gitdir: this.gitdir, oid, cache: this.cache });
    const summary: CommitSummary = { tree: commit.tree, parents: commit.parent };
    this.memory.rememberCommit(oid, summary);
    return summary;
  }

  /** Walks `to`'s first parents that are in the cache looking for `from`; no network. */
  private async relation(
    from: string,
    to: string,
    reads: SourceDiff['reads'],
    snapshot: FsClient,
  ): Promise<HistoryRelation> {
    let current: string | undefined = to;
    for (let i = 0; i < HISTORY_WALK_LIMIT && current !== undefined; i += 1) {
      let parents: string[];
      try {
        parents = (await this.commitSummary(current, reads, snapshot)).parents;
      } catch {
        return 'unknown';
      }
      if (parents.includes(from)) return 'fast-forward';
      if (parents.length === 0) return 'rewritten';
      current = parents[0];
    }
    return 'unknown';
  }

  private objectReader(reads: SourceDiff['reads'], snapshot: FsClient): ObjectReader {
    const { gitdir, cache, memory } = this;
    return {
      async readTree(oid: string): Promise<TreeEntry[]> {
        reads.trees += 1;
        const known = memory.tree(oid);
        if (known) {
          reads.fromMemory += 1;
          return known;
        }
        const { tree } = await git.readTree({ fs: snapshot, gitdir, oid, cache });
        const entries = tree.map((entry) => ({
          name: entry.path,
          oid: entry.oid,
          type: entry.type,
          mode: entry.mode,
        }));
        memory.rememberTree(oid, entries);
        return entries;
      },
      async readBlob(oid: string): Promise<Uint8Array> {
        reads.blobs += 1;
        return (await git.readBlob({ fs: snapshot, gitdir, oid, cache })).blob;
      },
    };
  }

  private context(step: GitStep): GitErrorContext {
    return gitErrorContext(this.name, this.url, step);
  }

  /** Maps anything isomorphic-git or the network throws to one of our typed errors. */
  private mapError(error: unknown, step: GitStep): Error {
    return mapGitError(error, {
      source: this.name,
      url: this.url,
      step,
      hasCredentials: this.auth !== undefined,
      notFound: (message, context, cause) =>
        step === 'fetch'
          ? new GitRefNotFoundError(`branch ${this.branch} not found`, context)
          : new GitObjectMissingError(`object not in the cache: ${message}`, context, { cause }),
    });
  }
}
