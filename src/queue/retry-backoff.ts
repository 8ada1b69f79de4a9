// The retry delay for jobs that threw: the capped backoff (clock/capped-backoff.ts), or more if the error asks.
import { retryDelayMs, type RetryBackoff } from '../clock/capped-backoff.ts';

/** The BullMQ backoff type name our job options use; workers register the strategy under it. */
export const ROLLGATE_BACKOFF_TYPE = 'rollgate-capped-exponential';

export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { baseMs: 1_000, capMs: 300_000, jitter: 0.5 };

/**
 * The least wait a thrown error asks for: its `retryAfterMs` (a 429's Retry-After, carried by the
 * reconcile's retry error), read by shape since errors cross module and process boundaries.
 */
export function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * The delay before retrying a job that threw `error`: the backoff's {@link retryDelayMs}, but never
 * less than what the error asks for ({@link retryAfterOf}).
 */
export function jobRetryDelayMs(
  attemptsMade: number,
  backoff: RetryBackoff,
  error: unknown,
  random: () => number = Math.random,
): number {
  return Math.max(retryDelayMs(attemptsMade, backoff, random), retryAfterOf(error) ?? 0);
}
