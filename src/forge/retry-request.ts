// Capped-backoff retries of one forge HTTP request: rate limits wait for the forge's hint, 5xx and network
// failures back off exponentially, every other answer goes back to the caller at once.
import type { ForgeOptions } from './forge.ts';

/** When and how long a forge request is retried. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Upper bound of one wait; a rate limit that asks for longer is not waited for. */
  maxRetryWaitMs: number;
  sleep: (ms: number) => Promise<void>;
  /** Epoch milliseconds, to read HTTP-date and epoch-second hints. */
  now: () => number;
}

export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;
/** One attempt's time limit: a forge that accepted the connection but never answers is a network failure. */
export const ATTEMPT_TIMEOUT_MS = 30_000;
/** First backoff of a 5xx, network failure or hint-less rate limit; doubles with each retry. */
export const FIRST_BACKOFF_MS = 1_000;

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The retry policy a forge's options ask for, with the documented defaults. */
export function retryPolicyOf(
  options: Pick<ForgeOptions, 'maxRetries' | 'maxRetryWaitMs' | 'sleep'>,
  now: () => number = Date.now,
): RetryPolicy {
  return {
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
    sleep: options.sleep ?? realSleep,
    now,
  };
}

// Reset headers carry either epoch seconds (GitHub, GitLab) or seconds from now (the IETF RateLimit draft);
// no delta is anywhere near 10^9 seconds, no epoch second is below it.
const EPOCH_SECONDS_FLOOR = 1_000_000_000;

function hintedWaitMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const reset = (headers.get('ratelimit-reset') ?? headers.get('x-ratelimit-reset'))?.trim();
  if (reset && /^\d+$/.test(reset)) {
    const value = Number(reset);
    return value >= EPOCH_SECONDS_FLOOR ? Math.max(0, value * 1000 - now) : value * 1000;
  }
  return undefined;
}

/**
 * How long a rate-limited answer asks the caller to wait (ms; 0 when it gives no hint), or undefined when the
 * answer is not a rate limit. A 403 counts only with an exhausted quota or a Retry-After: forges answer 403
 * both for "slow down" and for "not allowed", and only the latter needs a human.
 */
export function rateLimitWaitMs(response: Response, now: number): number | undefined {
  const { status, headers } = response;
  if (status !== 429 && status !== 403) return undefined;
  if (status === 403) {
    const exhausted = ['ratelimit-remaining', 'x-ratelimit-remaining'].some(
      (name) => headers.get(name)?.trim() === '0',
    );
    if (!exhausted && !headers.has('retry-after')) return undefined;
  }
  return hintedWaitMs(headers, now) ?? 0;
}

function backoffMs(retry: number, policy: RetryPolicy): number {
  return Math.min(policy.maxRetryWaitMs, FIRST_BACKOFF_MS * 2 ** retry);
}

// 501 says the forge will never do it: retrying cannot help.
const retriedServerStatus = (status: number): boolean => status >= 500 && status !== 501;

/**
 * Sends a request (a fresh one per attempt: `send` builds it) until it gets an answer worth returning. The
 * answer may still be an error status: rate limits and 5xx are returned once retries are used up, and a
 * rate limit asking for longer than `maxRetryWaitMs` is returned at once (the promotion is retried later
 * instead of holding a worker). A network failure on the last attempt is thrown as it came.
 */
export async function retryRequest(send: () => Promise<Response>, policy: RetryPolicy): Promise<Response> {
  for (let retry = 0; ; retry += 1) {
    const last = retry >= policy.maxRetries;
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      if (last) throw error;
      await policy.sleep(backoffMs(retry, policy));
      continue;
    }
    let waitMs: number;
    const limited = rateLimitWaitMs(response, policy.now());
    if (limited !== undefined) {
      if (last || limited > policy.maxRetryWaitMs) return response;
      waitMs = limited > 0 ? limited : backoffMs(retry, policy);
    } else if (retriedServerStatus(response.status)) {
      if (last) return response;
      waitMs = Math.min(
        policy.maxRetryWaitMs,
        hintedWaitMs(response.headers, policy.now()) ?? backoffMs(retry, policy),
      );
    } else {
      return response;
    }
    // Frees the connection of an answer that is dropped.
    await response.body?.cancel().catch(() => undefined);
    await policy.sleep(waitMs);
  }
}
