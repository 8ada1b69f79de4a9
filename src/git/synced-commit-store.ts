// Where the last commit applied per source is remembered, so a restart or a Redis loss diffs, not re-applies.

/**
 * The last synced commit per source name. The production implementation keeps it in the cluster (a
 * ConfigMap owned by Rollgate, one key per source), never in Redis: Redis is disposable, and losing the
 * last synced commit would turn the next poll into a full re-apply of every object.
 */
export interface SyncedCommitStore {
  get(source: string): Promise<string | undefined>;
  set(source: string, commit: string): Promise<void>;
}

/** A process-local store: for tests, the demo, and single-process runs that accept a full diff on restart. */
export class InMemorySyncedCommitStore implements SyncedCommitStore {
  private readonly commits = new Map<string, string>();

  constructor(initial: Record<string, string> = {}) {
    for (const [source, commit] of Object.entries(initial)) this.commits.set(source, commit);
  }

  get(source: string): Promise<string | undefined> {
    return Promise.resolve(this.commits.get(source));
  }

  set(source: string, commit: string): Promise<void> {
    this.commits.set(source, commit);
    return Promise.resolve();
  }
}
