// Capped exponential backoff with jitter: how long to wait before try number n, for anyone who retries.

/** Shape of a retry policy: first delay, ceiling, and how much of each delay is randomised. */
export interface RetryBackoff {
  /** Delay before the first retry, in ms. */
  baseMs: number;
  /** No retry waits longer than this, in ms. */
  capMs: number;
  /** Fraction (0..1) of each delay that is random, so a crowd of failing callers does not retry in step. */
  jitter: number;
}

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
