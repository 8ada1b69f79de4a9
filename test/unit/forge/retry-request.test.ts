import { describe, expect, it } from 'vitest';
import { forgeCodeOf, HttpFailure, httpFailureOf, toForgeError } from '../../../src/forge/http-failure.ts';
import { rateLimitWaitMs, retryRequest, type RetryPolicy } from '../../../src/forge/retry-request.ts';

const NOW = Date.parse('2026-01-02T03:04:05Z');

function policy(overrides: Partial<RetryPolicy> = {}): RetryPolicy & { slept: number[] } {
  const slept: number[] = [];
  return {
    maxRetries: 4,
    maxRetryWaitMs: 60_000,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
    now: () => NOW,
    slept,
    ...overrides,
  };
}

const answer = (status: number, headers: Record<string, string> = {}): Response =>
  new Response(status === 204 ? null : '{}', { status, headers });

/** A send function answering from a list, then 200. */
function scripted(...answers: Array<Response | Error>): {
  send: () => Promise<Response>;
  calls: () => number;
} {
  let calls = 0;
  return {
    send: () => {
      const next = answers[calls];
      calls += 1;
      if (next instanceof Error) return Promise.reject(next);
      return Promise.resolve(next ?? answer(200));
    },
    calls: () => calls,
  };
}

describe('rateLimitWaitMs', () => {
  const rows: Array<{
    name: string;
    status: number;
    headers: Record<string, string>;
    want: number | undefined;
  }> = [
    { name: '200 is not a rate limit', status: 200, headers: {}, want: undefined },
    { name: '429 without a hint', status: 429, headers: {}, want: 0 },
    { name: '429 Retry-After seconds', status: 429, headers: { 'retry-after': '7' }, want: 7_000 },
    {
      name: '429 Retry-After HTTP-date',
      status: 429,
      headers: { 'retry-after': new Date(NOW + 12_000).toUTCString() },
      want: 12_000,
    },
    {
      name: 'GitLab RateLimit-Reset epoch seconds',
      status: 429,
      headers: { 'ratelimit-reset': String(NOW / 1000 + 30) },
      want: 30_000,
    },
    {
      name: 'RateLimit-Reset as delta seconds',
      status: 429,
      headers: { 'ratelimit-reset': '5' },
      want: 5_000,
    },
    { name: 'plain 403 is a permission', status: 403, headers: {}, want: undefined },
    {
      name: '403 with an exhausted quota',
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 3) },
      want: 3_000,
    },
    { name: '403 with Retry-After', status: 403, headers: { 'retry-after': '1' }, want: 1_000 },
    { name: '403 with quota left', status: 403, headers: { 'ratelimit-remaining': '12' }, want: undefined },
  ];
  it.each(rows)('$name', ({ status, headers, want }) => {
    expect(rateLimitWaitMs(answer(status, headers), NOW)).toBe(want);
  });
});

describe('retryRequest', () => {
  it('waits as long as Retry-After asks, then returns the answer', async () => {
    const p = policy();
    const { send, calls } = scripted(answer(429, { 'retry-after': '2' }));
    const response = await retryRequest(send, p);
    expect(response.status).toBe(200);
    expect(calls()).toBe(2);
    expect(p.slept).toEqual([2_000]);
  });

  it('backs off exponentially on 5xx and hint-less rate limits, capped by maxRetryWaitMs', async () => {
    const p = policy({ maxRetryWaitMs: 3_000 });
    const { send } = scripted(answer(502), answer(429), answer(503), answer(500));
    expect((await retryRequest(send, p)).status).toBe(200);
    expect(p.slept).toEqual([1_000, 2_000, 3_000, 3_000]);
  });

  it('returns the last 5xx once retries are used up', async () => {
    const p = policy({ maxRetries: 2 });
    const { send, calls } = scripted(answer(500), answer(502), answer(503), answer(200));
    expect((await retryRequest(send, p)).status).toBe(503);
    expect(calls()).toBe(3);
  });

  it('does not wait for a rate limit longer than maxRetryWaitMs', async () => {
    const p = policy({ maxRetryWaitMs: 10_000 });
    const { send, calls } = scripted(answer(429, { 'retry-after': '3600' }));
    expect((await retryRequest(send, p)).status).toBe(429);
    expect(calls()).toBe(1);
    expect(p.slept).toEqual([]);
  });

  it('returns other answers at once: 4xx, 501', async () => {
    for (const status of [400, 401, 403, 404, 409, 422, 501]) {
      const p = policy();
      const { send, calls } = scripted(answer(status));
      expect((await retryRequest(send, p)).status).toBe(status);
      expect(calls()).toBe(1);
    }
  });

  it('retries network failures and throws the last one', async () => {
    const p = policy({ maxRetries: 1 });
    const { send, calls } = scripted(new TypeError('fetch failed'), new TypeError('fetch failed again'));
    await expect(retryRequest(send, p)).rejects.toThrow('fetch failed again');
    expect(calls()).toBe(2);
    expect(p.slept).toEqual([1_000]);
  });
});

describe('forge error codes', () => {
  const rows: Array<[number | undefined, boolean, string]> = [
    [undefined, false, 'forge.unavailable'],
    [500, false, 'forge.unavailable'],
    [503, false, 'forge.unavailable'],
    [429, true, 'forge.rate_limited'],
    [403, true, 'forge.rate_limited'],
    [401, false, 'forge.unauthorized'],
    [403, false, 'forge.unauthorized'],
    [404, false, 'forge.not_found'],
    [405, false, 'forge.conflict'],
    [406, false, 'forge.conflict'],
    [409, false, 'forge.conflict'],
    [422, false, 'forge.conflict'],
    [400, false, 'forge.invalid_response'],
  ];
  it.each(rows)('HTTP %s (rate limited: %s) → %s', (status, rateLimited, code) => {
    expect(forgeCodeOf(new HttpFailure(status, 'x', rateLimited))).toBe(code);
  });

  it("keeps the forge's own message and the call site", async () => {
    const failure = await httpFailureOf(
      new Response(JSON.stringify({ message: { title: ["can't be blank"] } }), { status: 400 }),
      NOW,
    );
    const error = toForgeError(failure, { provider: 'gitlab', repository: 'g/p', operation: 'open' });
    expect(error.code).toBe('forge.invalid_response');
    expect(error.context.status).toBe(400);
    expect(error.message).toBe('gitlab g/p: open: HTTP 400: {"title":["can\'t be blank"]}');
  });

  it('turns a response of the wrong shape into forge.invalid_response', () => {
    const error = toForgeError(new TypeError('x is undefined'), {
      provider: 'gitea',
      repository: 'o/r',
      operation: 'get',
    });
    expect(error.code).toBe('forge.invalid_response');
  });
});
