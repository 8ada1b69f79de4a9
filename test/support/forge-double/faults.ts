// Fault injection for the forge double: rate limits (primary and secondary) and server errors on the next requests.

/** A canned answer that replaces the real one. */
export interface FaultAnswer {
  /** 0: no answer at all. */
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

interface PendingFault {
  remaining: number;
  answer: (nowSeconds: number) => FaultAnswer;
}

/** Queued faults, consumed one request at a time in the order they were queued (API requests only). */
export class FaultQueue {
  private readonly pending: PendingFault[] = [];
  /** How many API requests were answered with a fault. */
  injected = 0;

  /**
   * The next `count` requests exceed the primary rate limit: 403 (or 429) with `x-ratelimit-remaining: 0`
   * and `x-ratelimit-reset` `resetInSeconds` from now, as GitHub answers.
   */
  primaryRateLimit(count: number, options: { resetInSeconds?: number; status?: 403 | 429 } = {}): this {
    const resetIn = options.resetInSeconds ?? 1;
    return this.queue(count, (now) => ({
      status: options.status ?? 403,
      headers: {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '5000',
        'x-ratelimit-reset': String(now + resetIn),
        'x-ratelimit-resource': 'core',
      },
      body: {
        message: 'API rate limit exceeded for user ID 1.',
        documentation_url:
          'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
        status: String(options.status ?? 403),
      },
    }));
  }

  /** The next `count` requests hit a secondary rate limit: 403 (or 429) with `retry-after`. */
  secondaryRateLimit(count: number, options: { retryAfterSeconds?: number; status?: 403 | 429 } = {}): this {
    return this.queue(count, () => ({
      status: options.status ?? 403,
      headers: { 'retry-after': String(options.retryAfterSeconds ?? 1) },
      body: {
        message:
          'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.',
        documentation_url:
          'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
        status: String(options.status ?? 403),
      },
    }));
  }

  /** The next `count` requests fail with `status` (default 502), as an overloaded forge or proxy does. */
  serverError(count: number, status = 502): this {
    return this.queue(count, () => ({
      status,
      headers: {},
      body: { message: 'Server Error', status: String(status) },
    }));
  }

  /** The next `count` requests are never answered (the connection stays open): a hung forge. */
  stall(count: number): this {
    return this.queue(count, () => ({ status: 0, headers: {}, body: {} }));
  }

  /** The fault for this request, if one is queued (consumes it). */
  take(nowSeconds: number): FaultAnswer | undefined {
    const next = this.pending[0];
    if (!next) return undefined;
    next.remaining -= 1;
    if (next.remaining <= 0) this.pending.shift();
    this.injected += 1;
    return next.answer(nowSeconds);
  }

  clear(): void {
    this.pending.length = 0;
  }

  private queue(count: number, answer: (nowSeconds: number) => FaultAnswer): this {
    if (count > 0) this.pending.push({ remaining: count, answer });
    return this;
  }
}
