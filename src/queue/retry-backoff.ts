// The retry delay for jobs that threw: capped exponential backoff with jitter.

/** The BullMQ backoff type name our job options use; workers register the strategy under it. */
export const ROLLGATE_BACKOFF_TYPE = 'rollgate-capped-exponential';

/** Shape of a retry policy: first delay, ceiling, and how much of each delay is randomised. */
export interface RetryBackoff {
  /** Delay before the first retry, in ms. */
  baseMs: number;
  /** No retry waits longer than this, in ms. */
  capMs: number;
  /** Fraction (0..1) of each delay that is random, so a crowd of failing jobs does not retry in step. */
  jitter: number;
}

export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { baseMs: 1_000, capMs: 300_000, jitter: 0.5 };

/**
 * The delay before retry number `attemptsMade` (1 for the first retry): `min(cap, base·2^(n-1))`,
 * of which a `jitter` fraction is drawn uniformly. `random` is injectable for tests.
 */
export function retryDelayMs(
  attemptsMade: number,
  backoff: RetryBackoff,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, Math.min(attemptsMade - 1, 30));
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** exponent);
  const fixed = ceiling * (1 - backoff.jitter);
  return Math.round(fixed + random() * ceiling * backoff.jitter);
}

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
