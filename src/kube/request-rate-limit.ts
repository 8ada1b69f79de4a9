// Client-side API rate limit, as client-go's: a token bucket of `burst` tokens refilled at `qps` per second.
import type { Clock } from '../clock/clock.ts';

/** `qps` tokens per second, at most `burst` saved up; `qps` 0 turns the limit off. */
export interface RateLimitSettings {
  qps: number;
  burst: number;
}

/** The bucket at an instant: tokens left (negative: requests already promised future tokens). */
export interface BucketState {
  tokens: number;
  /** When `tokens` was computed, in ms. */
  at: number;
}

/**
 * Takes one token at `now` (pure): refills for the time since `state.at`, up to `burst`, then spends a
 * token. When none is left the token is reserved from the future and `waitMs` says how long the caller
 * must wait for it, so requests are served in order at `qps` and never more than `burst` at once.
 */
export function takeToken(
  state: BucketState,
  settings: RateLimitSettings,
  now: number,
): { state: BucketState; waitMs: number } {
  if (settings.qps <= 0) return { state, waitMs: 0 };
  const elapsed = Math.max(0, now - state.at);
  const refilled = Math.min(settings.burst, state.tokens + (elapsed * settings.qps) / 1000);
  const tokens = refilled - 1;
  const waitMs = tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / settings.qps);
  return { state: { tokens, at: Math.max(now, state.at) }, waitMs };
}

/** The shell around {@link takeToken}: one bucket shared by every API client of a process. */
export class RequestRateLimiter {
  private state: BucketState;

  constructor(
    readonly settings: RateLimitSettings,
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    this.state = { tokens: settings.burst, at: clock.now().getTime() };
  }

  /** Resolves when the request may be sent. */
  async take(): Promise<void> {
    const { state, waitMs } = takeToken(this.state, this.settings, this.clock.now().getTime());
    this.state = state;
    if (waitMs > 0) await this.sleep(waitMs);
  }
}
