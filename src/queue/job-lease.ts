// A running job's hold on its BullMQ lock, confirmed before a write nothing else fences.
import type { Job } from 'bullmq';

/** The job's lock is no longer this worker's: another worker has taken (or may take) the job over. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  readonly code = 'queue.lease_lost';
  constructor(readonly jobId: string) {
    super(
      `job ${jobId}: its lock is no longer held by this worker (it stalled and another worker may run it); stopping before the write`,
    );
  }
}

/**
 * A job's lease on its lock. BullMQ renews the lock on a timer; a process starved of CPU (or blocked)
 * for longer than the lock lasts loses it, and another worker runs the job while this one still does.
 * Writes conditional on a resourceVersion are safe from that overlap (the stale one gets a 409), but a
 * traffic router's write is conditional only on the route object as read just before it: a stale pass
 * would put back weights a newer pass already moved on from. `confirm` renews the lock if it is still
 * ours (one Redis script) and throws {@link LeaseLostError} if not; while it is renewed, no other worker
 * can take the job, so the write that follows at once cannot overlap another run's.
 */
export interface JobLease {
  confirm(): Promise<void>;
}

/** The lease of `job` run under `token`, renewed for `lockDurationMs` at each confirmation. */
export function bullJobLease(job: Job, token: string | undefined, lockDurationMs: number): JobLease {
  return {
    async confirm() {
      // No token: the job was not taken through a worker's lock (BullMQ's manual processing); nothing to fence.
      if (token === undefined) return;
      const extended = await job.extendLock(token, lockDurationMs);
      if (extended !== 1) throw new LeaseLostError(job.id ?? '');
    },
  };
}
