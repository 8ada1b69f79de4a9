// The lock arithmetic behind "a killed process's jobs are taken over within 15 s".
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { DEFAULT_STALL_RESTART_BACKOFF } from '../../../src/queue/stall-restart.ts';
import {
  DEFAULT_LOCK_DURATION_MS,
  DEFAULT_STALLED_INTERVAL_MS,
  stalledIntervalFor,
  takeoverBoundMs,
} from '../../../src/queue/start-worker.ts';

describe('worker locks', () => {
  const rows = [
    { lockMs: 1_000, checkMs: 500, boundMs: 2_000 },
    { lockMs: 2_000, checkMs: 500, boundMs: 3_000 },
    { lockMs: 6_000, checkMs: 1_500, boundMs: 9_000 },
    { lockMs: 8_000, checkMs: 2_000, boundMs: 12_000 },
    { lockMs: 30_000, checkMs: 2_000, boundMs: 34_000 },
  ];
  for (const row of rows)
    it(`a ${row.lockMs} ms lock: checks every ${row.checkMs} ms, taken over within ${row.boundMs} ms`, () => {
      expect(stalledIntervalFor(row.lockMs)).toBe(row.checkMs);
      expect(takeoverBoundMs(row.lockMs)).toBe(row.boundMs);
    });

  it('the defaults (code and configuration agree) leave room under 15 s', () => {
    expect(configSchema.parse({}).workers.lockDurationMs).toBe(DEFAULT_LOCK_DURATION_MS);
    expect(DEFAULT_STALLED_INTERVAL_MS).toBe(stalledIntervalFor(DEFAULT_LOCK_DURATION_MS));
    expect(takeoverBoundMs(DEFAULT_LOCK_DURATION_MS)).toBeLessThanOrEqual(10_000);
  });

  it('work whose job lost its lock runs again well before the resync would have brought it back', () => {
    const resyncMs = configSchema.parse({}).workers.resyncMs;
    expect(DEFAULT_STALL_RESTART_BACKOFF.capMs).toBeLessThanOrEqual(resyncMs / 3);
  });
});
