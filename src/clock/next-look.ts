// When to look at something again: the one minimum every "look again at" candidate is fed into.

/**
 * What a candidate is. `wait`: something is expected to change by then (a pause ends, a measurement falls
 * due, a deadline passes); not a failure. `backoff`: something failed and is tried again no sooner than
 * this (a failing traffic router). A thrown error is never a candidate: the queue retries it with its own
 * backoff (src/queue/retry-backoff.ts).
 */
export type LookKind = 'wait' | 'backoff';

/** One moment something may change, relative to the caller's `now`, and why. */
export interface LookCandidate {
  afterMs: number;
  reason: string;
  /** Default `wait`. */
  kind?: LookKind;
}

/** The decision: look again after `afterMs` (never negative), for `reason`. */
export interface NextLook {
  afterMs: number;
  reason: string;
  kind: LookKind;
}

/** A candidate at the absolute moment `atMs` (ms since the epoch), as seen from `now`. */
export function lookAt(atMs: number, now: Date, reason: string, kind: LookKind = 'wait'): LookCandidate {
  return { afterMs: atMs - now.getTime(), reason, kind };
}

/**
 * The earliest candidate: the single decision of when to look again. Absent and non-finite candidates
 * are dropped (no timer); a moment already past is clamped to 0 (look now, never "in the past"); on a tie
 * the first listed wins, so callers list first the candidate whose reason should be reported. There is
 * no floor or ceiling beyond that: a candidate that must not come back at once (a plan that never
 * settles) carries its own delay. Undefined when no candidate is left: only a change in the cluster (or
 * Git) can give work.
 */
export function nextLook(candidates: ReadonlyArray<LookCandidate | undefined>): NextLook | undefined {
  let best: NextLook | undefined;
  for (const candidate of candidates) {
    if (candidate === undefined || !Number.isFinite(candidate.afterMs)) continue;
    const afterMs = Math.max(0, candidate.afterMs);
    if (best === undefined || afterMs < best.afterMs)
      best = { afterMs, reason: candidate.reason, kind: candidate.kind ?? 'wait' };
  }
  return best;
}
