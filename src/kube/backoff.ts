// Bounded exponential backoff with jitter, for conflicts and transient API errors.

/** Backoff shape; `random` is injected so tests are deterministic. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** 0..1 share of the delay that is randomized (0.5 = "equal jitter": delay in [d/2, d]). */
  jitter: number;
  random?: () => number;
}

export const DEFAULT_CONFLICT_BACKOFF: BackoffPolicy = { baseMs: 50, maxMs: 2_000, jitter: 0.5 };
export const DEFAULT_TRANSIENT_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 30_000, jitter: 0.5 };

/**
 * Delay before retry number `attempt` (0-based): min(maxMs, baseMs * 2^attempt), of which the `jitter`
 * share is randomized downwards, so concurrent writers spread out but the wait never exceeds maxMs.
 */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy): number {
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 30);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  const random = policy.random ?? Math.random;
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(ceiling * (1 - jitter) + ceiling * jitter * r);
}
