// A job BullMQ failed for losing its lock too often runs again after a capped backoff: a stall never strands work.
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { retryDelayMs, type RetryBackoff } from '../clock/capped-backoff.ts';

/**
 * BullMQ's reason for a job whose lock ran out more than `maxStalledCount` times (its worker died, or its
 * event loop was starved of CPU for longer than the lock). BullMQ 6 marks such a job when it moves it back
 * to wait (hash field `defa`) and the next worker to take it fails it unrun, with this message.
 */
export const LOCK_LOST_REASON = 'job stalled more than allowable limit';

/**
 * Backoff of the restart, by how many times in a row the same work was failed so: 1 s, 2 s, 4 s … 60 s.
 * Short, because a starved process is the usual cause and the work is still wanted; capped well under the
 * 3-minute resync so a restart is never later than what used to recover it. A job that crashes every
 * process that runs it (four crashes per failure at the default maxStalledCount) thus costs at most four
 * crashes a minute, not a hot loop.
 */
export const DEFAULT_STALL_RESTART_BACKOFF: RetryBackoff = { baseMs: 1_000, capMs: 60_000, jitter: 0.5 };

/**
 * How long a count of lock-lost failures of one piece of work is kept after its last one: ten times the
 * cap, so a job that keeps crashing its workers stays at the cap, and work that lost its lock once under a
 * busy hour starts again from 1 s next time.
 */
export function stallCountTtlMs(backoff: RetryBackoff): number {
  return backoff.capMs * 10;
}

/** True when BullMQ failed `job` for losing its lock more than `maxStalledCount` times (not a handler error). */
export function isLockLostFailure(job: Job, error: Error | undefined): boolean {
  return job.deferredFailure === LOCK_LOST_REASON || error?.message === LOCK_LOST_REASON;
}

/**
 * The Redis key counting lock-lost failures of one piece of work: its deduplication id (the rollout, the
 * source…), so the count survives the new job each restart adds.
 */
export function stallCountKey(countKeyBase: string, job: Job): string {
  return `${countKeyBase}:${job.deduplicationId ?? job.name}`;
}

/**
 * Counts one more lock-lost failure of the work under `key` and returns the delay before it runs again:
 * the capped backoff for that many failures in a row (within {@link stallCountTtlMs}).
 */
export async function nextStallRestartDelayMs(
  redis: Redis,
  key: string,
  backoff: RetryBackoff,
  random: () => number = Math.random,
): Promise<number> {
  const results = await redis.multi().incr(key).pexpire(key, stallCountTtlMs(backoff)).exec();
  const count = Number(results?.[0]?.[1] ?? 1);
  return retryDelayMs(count, backoff, random);
}
