// How long a stop waits, and what it reports as abandoned, for each state of jobs and Redis.
import { describe, expect, it } from 'vitest';
import { abandonedWork, stopWithinGrace } from '../../../src/process/stop-within-grace.ts';
import type { UnfinishedJob } from '../../../src/queue/start-worker.ts';

const running: UnfinishedJob = { queue: 'reconcile', jobId: '7', subject: 'prod/web', state: 'running' };
const unrecorded: UnfinishedJob = { queue: 'sync', jobId: '9', subject: 'apps', state: 'unrecorded' };
const never = (): Promise<void> => new Promise(() => undefined);

describe('abandonedWork', () => {
  it.each([
    { name: 'nothing', unfinished: [], redisReachable: true, want: [] },
    {
      name: 'a running and an unrecorded job',
      unfinished: [running, unrecorded],
      redisReachable: true,
      want: [
        'reconcile job prod/web (id 7, still running; it runs again once its lock expires)',
        'sync job apps (id 9, finished but not recorded in Redis; it runs again once its lock expires)',
      ],
    },
    {
      name: 'Redis unreachable',
      unfinished: [],
      redisReachable: false,
      want: ['Redis at 10.0.0.1:6379 (unreachable: its connections were dropped, not closed)'],
    },
  ])('$name', ({ unfinished, redisReachable, want }) => {
    expect(abandonedWork({ unfinished, redisReachable, redisAddress: '10.0.0.1:6379' })).toEqual(want);
  });
});

describe('stopWithinGrace', () => {
  it('a stop that completes is clean', async () => {
    const report = await stopWithinGrace(
      { stop: async () => undefined, unfinishedJobs: () => [] },
      { graceMs: 1_000, redisReachable: () => true, redisAddress: 'r:1' },
    );
    expect(report).toMatchObject({ clean: true, abandoned: [] });
  });

  it('Redis unreachable and no handler running: stops waiting at once', async () => {
    const report = await stopWithinGrace(
      { stop: never, unfinishedJobs: () => [unrecorded] },
      { graceMs: 5_000, pollMs: 10, redisReachable: () => false, redisAddress: 'r:1' },
    );
    expect(report.cutShort).toBe('redis-unreachable');
    expect(report.elapsedMs).toBeLessThan(1_000);
    expect(report.abandoned).toHaveLength(2);
  });

  it('Redis unreachable but a handler still running: waits for it, up to the grace period', async () => {
    const report = await stopWithinGrace(
      { stop: never, unfinishedJobs: () => [running] },
      { graceMs: 300, pollMs: 10, redisReachable: () => false, redisAddress: 'r:1' },
    );
    expect(report.cutShort).toBe('grace-expired');
    expect(report.elapsedMs).toBeGreaterThanOrEqual(290);
    expect(report.abandoned[0]).toContain('reconcile job prod/web (id 7, still running');
  });

  it('Redis up, nothing unfinished, yet not closed in time: names the connections', async () => {
    const report = await stopWithinGrace(
      { stop: never, unfinishedJobs: () => [] },
      { graceMs: 100, pollMs: 10, redisReachable: () => true, redisAddress: 'r:1' },
    );
    expect(report).toMatchObject({
      clean: false,
      cutShort: 'grace-expired',
      abandoned: ['connections that did not close within 100 ms'],
    });
  });
});
