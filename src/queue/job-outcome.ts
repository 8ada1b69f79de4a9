// What a job handler returns: the one place a handler says what the queue should do next.
import type { NextLook } from '../clock/next-look.ts';

/**
 * The outcome of one job run.
 * - `done`: nothing more to do until something new happens.
 * - `requeue`: run again after `afterMs` (a wait, not a failure: a pause ending, an analysis interval).
 * - `stalled`: a human must act; the job fails at once, without retries.
 * A handler that throws means "transient": the job is retried with capped exponential backoff (at
 * least the error's `retryAfterMs`, when it carries one).
 */
export type JobOutcome =
  | { kind: 'done' }
  | { kind: 'requeue'; afterMs: number; reason: string }
  | { kind: 'stalled'; reason: string };

/**
 * The label each outcome (and a thrown error) is counted under in metrics and logs; `lock-lost`: BullMQ
 * failed the job unrun after its lock ran out too often, and its work was enqueued again.
 */
export type JobOutcomeLabel = JobOutcome['kind'] | 'error' | 'invalid' | 'lock-lost';

/**
 * The outcome for a decision of `nextLook` (src/clock/next-look.ts): a requeue (a wait, never a retry:
 * the job completes and its work is enqueued again, delayed), or `done` when nothing is pending.
 */
export function lookOutcome(look: NextLook | undefined): JobOutcome {
  return look === undefined
    ? { kind: 'done' }
    : { kind: 'requeue', afterMs: look.afterMs, reason: look.reason };
}
