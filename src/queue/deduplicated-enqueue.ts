// Adds a job that must never run twice at once for one id, and never lose a wake-up: BullMQ
// deduplication with keepLastIfActive, plus "an earlier wake-up wins over a later one".
import type { Queue, JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { systemClock } from '../clock/clock.ts';

/** What an enqueue did, as far as it could tell (for logs and tests; the guarantees hold regardless). */
export type EnqueueAction =
  /** No job existed for the id: a new one was added. */
  | 'added'
  /** A job for the id was already waiting or due no later than asked: nothing was added. */
  | 'coalesced'
  /** A delayed job for the id was due later than asked: it was moved earlier. */
  | 'rescheduled'
  /** A job for the id is running: it runs once more afterwards (immediate requests only). */
  | 'after-active'
  /** A timer wake-up while a job for the id runs: dropped, the running job decides its own next wake-up. */
  | 'skipped-active';

export interface EnqueueResult {
  action: EnqueueAction;
  /** The id of the job that will carry the request, when known. */
  jobId: string | undefined;
}

/** BullMQ bakes a 12-bit counter into the delayed set's scores: `dueMs * 4096 + n`. */
const DELAYED_SCORE_FACTOR = 0x1000;

/**
 * Enqueues `data` under deduplication id `dedupId`.
 *
 * Guarantees, built on BullMQ 6.7 `deduplication: { id, keepLastIfActive: true, reschedule: true }`:
 * - at most one job per id is pending and at most one is running (never two workers on one id);
 * - an immediate request while the job is waiting is absorbed (the waiting job will see the news);
 *   while it is delayed, the delayed job is moved to now; while it runs, BullMQ stores the request
 *   and creates exactly one more job when the running one finishes (completed or failed);
 * - a delayed request (`delayMs > 0`) only ever moves a pending job earlier, never later;
 * - a timer wake-up (`wakeUp: true`: the requeueAfter of a finished run) is dropped while a job for
 *   the id runs: that run reads newer state than the timer was based on and returns its own next
 *   wake-up. Any other request while a job runs ("news") is kept and runs once more afterwards.
 * Due times are compared on the system clock because BullMQ stamps jobs with it.
 * The checks before a delayed add are not atomic with it: two delayed requests racing within the
 * same few milliseconds may leave the later of the two due times; the next run corrects it.
 */
export async function enqueueDeduplicated(
  queue: Queue,
  redis: Redis,
  dedupId: string,
  jobName: string,
  data: unknown,
  delayMs: number,
  jobOptions: JobsOptions,
  wakeUp = false,
): Promise<EnqueueResult> {
  const delay = Math.max(0, Math.round(delayMs));
  const existingId = (await queue.getDeduplicationJobId(dedupId)) ?? undefined;
  const state = existingId === undefined ? undefined : await queue.getJobState(existingId);
  const existingLive =
    state !== undefined && state !== 'unknown' && state !== 'completed' && state !== 'failed';

  let action: EnqueueAction = 'added';
  if (existingLive && existingId !== undefined) {
    if (state === 'active') {
      if (wakeUp) return { action: 'skipped-active', jobId: existingId };
      action = 'after-active';
    } else if (state === 'delayed') {
      const score = await redis.zscore(queue.toKey('delayed'), existingId);
      const dueMs = score === null ? 0 : Math.floor(Number(score) / DELAYED_SCORE_FACTOR);
      if (dueMs <= systemClock.now().getTime() + delay) return { action: 'coalesced', jobId: existingId };
      action = 'rescheduled';
    } else {
      return { action: 'coalesced', jobId: existingId };
    }
  }

  const job = await queue.add(jobName, data, {
    ...jobOptions,
    delay,
    deduplication: { id: dedupId, keepLastIfActive: true, reschedule: true },
  });
  return { action, jobId: action === 'after-active' ? existingId : job.id };
}
