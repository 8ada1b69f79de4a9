// How long a provider that answered 429 asked to be left alone: Retry-After or Datadog's X-RateLimit-Reset, bounded.
import type { IncomingHttpHeaders } from 'node:http';

/** Used when a 429 names no delay. */
export const RATE_LIMIT_DEFAULT_MS = 30_000;
/** The longest wait a 429 can impose on a metric: past it the metric is asked again (and errs again). */
export const RATE_LIMIT_MAX_MS = 10 * 60_000;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The delay a 429 answer asks for: `Retry-After` (seconds or an HTTP date, RFC 9110), else
 * `X-RateLimit-Reset` (seconds until the window resets, as Datadog sends it), else
 * {@link RATE_LIMIT_DEFAULT_MS}; never less than a second nor more than {@link RATE_LIMIT_MAX_MS}.
 */
export function rateLimitDelayMs(headers: IncomingHttpHeaders, now: Date): number {
  const retryAfter = header(headers, 'retry-after')?.trim();
  let ms: number | undefined;
  if (retryAfter !== undefined && retryAfter !== '') {
    ms = /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : Date.parse(retryAfter) - now.getTime();
  } else {
    const reset = header(headers, 'x-ratelimit-reset')?.trim();
    if (reset !== undefined && /^\d+$/.test(reset)) ms = Number(reset) * 1000;
  }
  if (ms === undefined || Number.isNaN(ms)) ms = RATE_LIMIT_DEFAULT_MS;
  return Math.min(Math.max(ms, 1000), RATE_LIMIT_MAX_MS);
}
