// Retry and retention defaults for the jobs of each queue.
import type { JobsOptions } from 'bullmq';
import type { QueueName } from './queue-names.ts';
import { ROLLGATE_BACKOFF_TYPE } from './retry-backoff.ts';

/**
 * Attempts per queue. A reconcile job keeps retrying (capped at 5 min apart, so ~3.5 days) because
 * a rollout is never given up on a transient error; a poll retries a little, the next scheduled
 * poll follows anyway; a sync retries for about half an hour before the next commit or resync.
 */
export const ATTEMPTS_BY_QUEUE: Record<QueueName, number> = {
  poll: 3,
  sync: 12,
  reconcile: 1_000,
  // A forge outage or rate limit is waited out for about a day; the next phase change enqueues again anyway.
  promote: 300,
  // About an hour of retries at the capped backoff: a message that late is news no longer.
  notify: 20,
  // Like a reconcile: a fleet is never given up on a transient error.
  fleet: 1_000,
  // As a promotion: a forge outage is waited out; the revision stays aborted meanwhile.
  revert: 300,
};

/** The options every Rollgate job is added with (besides delay and deduplication). */
export function jobDefaults(queue: QueueName): JobsOptions {
  return {
    attempts: ATTEMPTS_BY_QUEUE[queue],
    backoff: { type: ROLLGATE_BACKOFF_TYPE },
    // Finished jobs are kept briefly for inspection only: Redis holds work in flight, not history.
    removeOnComplete: { age: 3_600, count: 1_000 },
    removeOnFail: { age: 86_400, count: 5_000 },
  };
}
