// Pure parts of the queue module: names, payload validation, rollout keys, retry delays.
import { describe, expect, it } from 'vitest';
import { bullPrefix } from '../../../src/queue/queue-names.ts';
import { parseJobPayload, parseRolloutKey, rolloutKey } from '../../../src/queue/job-payloads.ts';
import { InvalidJobPayloadError } from '../../../src/queue/invalid-job-payload-error.ts';
import { retryDelayMs } from '../../../src/clock/capped-backoff.ts';
import { jobRetryDelayMs } from '../../../src/queue/retry-backoff.ts';

describe('bullPrefix', () => {
  it('hash-tags the prefix so every queue key lands in one Redis Cluster slot', () => {
    expect(bullPrefix()).toBe('{rollgate}');
    expect(bullPrefix('staging')).toBe('{staging}');
    expect(bullPrefix('{already}')).toBe('{already}');
    expect(() => bullPrefix('')).toThrow(RangeError);
  });
});

describe('job payloads', () => {
  it('accepts the version-1 payload of each queue', () => {
    expect(parseJobPayload('reconcile', { v: 1, namespace: 'prod', name: 'web' })).toEqual({
      v: 1,
      namespace: 'prod',
      name: 'web',
    });
    expect(parseJobPayload('poll', { v: 1, source: 'apps', reason: 'webhook' }).reason).toBe('webhook');
    const sync = parseJobPayload('sync', {
      v: 1,
      source: 'apps',
      commit: 'abc',
      objects: [{ apiVersion: 'v1', kind: 'Service', namespace: 'prod', name: 'web', change: 'added' }],
    });
    expect(sync.objects).toHaveLength(1);
  });

  it('rejects a payload of another version or shape with a typed error naming the job', () => {
    const attempt = (): unknown => parseJobPayload('reconcile', { v: 2, key: 'prod/web' }, '42');
    expect(attempt).toThrow(InvalidJobPayloadError);
    try {
      attempt();
    } catch (error) {
      expect((error as InvalidJobPayloadError).code).toBe('rollgate.queue.invalid-payload');
      expect((error as Error).message).toContain('job 42 on queue reconcile');
    }
    expect(() => parseJobPayload('poll', { v: 1, source: 'apps', reason: 'cron' })).toThrow(
      InvalidJobPayloadError,
    );
  });

  it('round-trips rollout keys and refuses anything but namespace/name', () => {
    expect(rolloutKey(parseRolloutKey('prod/web'))).toBe('prod/web');
    for (const bad of ['web', '/web', 'prod/', 'a/b/c', ''])
      expect(() => parseRolloutKey(bad)).toThrow(RangeError);
  });
});

describe('retryDelayMs', () => {
  const backoff = { baseMs: 1_000, capMs: 30_000, jitter: 0.5 };
  it('doubles from the base delay up to the cap', () => {
    const noJitter = { ...backoff, jitter: 0 };
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => retryDelayMs(n, noJitter))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
  it('randomises the jitter fraction of each delay', () => {
    expect(retryDelayMs(3, backoff, () => 0)).toBe(2_000);
    expect(retryDelayMs(3, backoff, () => 1)).toBe(4_000);
    expect(retryDelayMs(3, backoff, () => 0.5)).toBe(3_000);
  });
});

describe('jobRetryDelayMs', () => {
  const backoff = { baseMs: 1_000, capMs: 30_000, jitter: 0 };
  const rows: Array<{ name: string; attempt: number; error: unknown; want: number }> = [
    { name: 'a plain error waits the backoff', attempt: 2, error: new Error('boom'), want: 2_000 },
    {
      name: "a Retry-After longer than the backoff wins (a 429's)",
      attempt: 1,
      error: Object.assign(new Error('slow down'), { retryAfterMs: 7_000 }),
      want: 7_000,
    },
    {
      name: 'a Retry-After shorter than the backoff does not shorten it',
      attempt: 4,
      error: Object.assign(new Error('slow down'), { retryAfterMs: 500 }),
      want: 8_000,
    },
    {
      name: 'a retryAfterMs that is not a positive number is ignored',
      attempt: 1,
      error: { retryAfterMs: 'soon' },
      want: 1_000,
    },
    { name: 'no error at all', attempt: 1, error: undefined, want: 1_000 },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(jobRetryDelayMs(row.attempt, backoff, row.error)).toBe(row.want);
    });
});
