// The GitSources of one process that follow the same remote branch with the same credentials: a new one's
// first fetch copies a sibling's cache instead of downloading the same snapshot again.
import { createHash } from 'node:crypto';
import type { ServerRef } from 'isomorphic-git';
import { followOnCalls } from '../concurrency/follow-on-calls.ts';
import type { GitHttpTransport } from './http-transport.ts';

/** What a cache can give a sibling: its objects at a commit (see GitSource.copyCacheTo). */
export interface CacheDonor {
  /** The commit its cache holds as the branch tip now, if known without reading the disk. */
  readonly knownTip: string | undefined;
  /** Copies its objects into `gitdir` when its tip is `commit`; false when it no longer is. */
  copyCacheTo(gitdir: string, commit: string): Promise<boolean>;
}

/**
 * The sources of a process grouped by what they fetch: remote URL (without credentials), branch, and the
 * credentials themselves (hashed), so a source never reads objects that only another's token could fetch.
 * 100 GitSources created at once on one repository (one per folder) made 100 first fetches of the same
 * snapshot, 91 % of their sync time (docs/BENCHMARKS.md, issue 37); with this, one.
 */
export class CacheSiblings {
  private readonly groups = new Map<string, Set<CacheDonor>>();
  /** First fetches from the remote running now, by key and commit: a sibling waits for one, then copies. */
  private readonly fetching = new Map<string, Promise<unknown>>();
  /** Ref checks by key: the one running, and the one that starts once it ends (see {@link refCheck}). */
  private readonly refChecks = followOnCalls<ServerRef[]>();
  /** One HTTP transport by key while the group has members (see {@link transportOf}). */
  private readonly transports = new Map<string, GitHttpTransport>();

  /** The key of a source's remote branch and credentials. */
  static keyOf(url: string, branch: string, auth: object | undefined): string {
    const credentials = createHash('sha256')
      .update(JSON.stringify(auth ?? null))
      .digest('hex');
    return JSON.stringify([url, branch, credentials]);
  }

  /** Adds `donor` under `key`; returns what removes it (the source closed). */
  join(key: string, donor: CacheDonor): () => void {
    let group = this.groups.get(key);
    if (group === undefined) this.groups.set(key, (group = new Set()));
    group.add(donor);
    return () => {
      group.delete(donor);
      if (group.size === 0 && this.groups.get(key) === group) {
        this.groups.delete(key);
        this.transports.delete(key);
      }
    };
  }

  /**
   * Fills `gitdir` (an empty cache) from a sibling whose tip is `commit`; false when none has it. The
   * tip is a hint here and checked again under the sibling's own lock, so a sibling fetching meanwhile
   * is skipped rather than copied half-written.
   */
  async seed(key: string, self: CacheDonor, gitdir: string, commit: string): Promise<boolean> {
    // Sources created together all start empty: the first one's download serves the others.
    await this.fetching.get(JSON.stringify([key, commit]))?.catch(() => undefined);
    for (const donor of this.groups.get(key) ?? []) {
      if (donor === self || donor.knownTip !== commit) continue;
      if (await donor.copyCacheTo(gitdir, commit)) return true;
    }
    return false;
  }

  /** Runs a first fetch of `commit` from the remote, which siblings starting empty wait for ({@link seed}). */
  async firstFetch<T>(key: string, commit: string, work: () => Promise<T>): Promise<T> {
    const id = JSON.stringify([key, commit]);
    if (this.fetching.has(id)) return work();
    const run = work();
    this.fetching.set(id, run);
    try {
      return await run;
    } finally {
      this.fetching.delete(id);
    }
  }

  /**
   * The transport of the sources under `key`, made by `make` for the first: what it remembers (the
   * capability advertisement, for ten minutes) then serves them all, so a source's first ref check is
   * one request, not two. Its memory is keyed by repository and credentials, as the group is; its limits
   * (timeout, largest pack) are the process's (`git.*`), the same for every source it makes.
   */
  transportOf(key: string, make: () => GitHttpTransport): GitHttpTransport {
    let transport = this.transports.get(key);
    if (transport === undefined) this.transports.set(key, (transport = make()));
    return transport;
  }

  /**
   * Runs `check` (a request for the branch's head) for a source under `key`, or joins a sibling's: never
   * one already running, which may have been answered before a push the caller is asking about (a
   * webhook's poll), but the next one, started once the running one ends, for every caller that came
   * meanwhile (followOnCalls): sources polled at the same moment (100 created in one apply) no longer ask
   * one each. Only the request is shared: each caller judges the answer and words a failure as its own.
   */
  refCheck(key: string, check: () => Promise<ServerRef[]>): Promise<ServerRef[]> {
    return this.refChecks(key, check);
  }
}
