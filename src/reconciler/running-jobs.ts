// The reconcile jobs running in this process, and the watch events they will read anyway.

/** One running job's side of {@link RunningJobs}. */
export interface RunningJob {
  /** The job's pass is about to read the rollout's state: every event applied before now is in what it reads. */
  reading(): void;
  /** The job is over: true when an event it absorbed came after its last read (the caller enqueues it again). */
  finish(): boolean;
}

/**
 * Which rollouts have a reconcile job running in this process, so the watch need not enqueue their
 * events while a later read of that job will see them.
 *
 * A job runs passes until one writes nothing, and each pass reads the rollout's state afresh: from the
 * informer cache (which a watch event updates before it is looked at here) or from the API (which has the
 * change before its event is sent). So an event for a rollout whose job is running needs no new job if
 * a pass of that job reads after it. Before, each such event asked Redis for one more job after the
 * running one ("after-active"), and most of those jobs read the same state and planned nothing: the
 * running job's own writes come back as events while it runs, as do its pods' changes.
 *
 * What guarantees no event is lost: an event is absorbed only while a job for its rollout runs here, and
 * when that job ends the caller enqueues the rollout once if an event came after the job's last read, as
 * the watch would have. Jobs in other processes are unknown here: their events are enqueued as before.
 */
export class RunningJobs {
  /** Rollout key → its running jobs (normally one; two while a stalled run overlaps its replacement). */
  private readonly jobs = new Map<string, Set<{ newsSinceRead: boolean }>>();

  /** A job for `key` (the reconcile queue's `namespace/name`) starts in this process. */
  start(key: string): RunningJob {
    const job = { newsSinceRead: false };
    let running = this.jobs.get(key);
    if (running === undefined) this.jobs.set(key, (running = new Set()));
    running.add(job);
    return {
      reading: () => {
        job.newsSinceRead = false;
      },
      finish: () => {
        running.delete(job);
        if (running.size === 0 && this.jobs.get(key) === running) this.jobs.delete(key);
        return job.newsSinceRead;
      },
    };
  }

  /**
   * A watch event for `key` came (and is in the cache): true when a job for it runs here and takes it
   * (its next read sees it, or its end enqueues it); false when the caller must enqueue it.
   */
  absorb(key: string): boolean {
    const running = this.jobs.get(key);
    if (running === undefined) return false;
    for (const job of running) job.newsSinceRead = true;
    return true;
  }

  /** Rollouts with a job running here (for tests). */
  get size(): number {
    return this.jobs.size;
  }
}
