// Poll queue against the real Redis: schedulers per source, coalesced webhook polls.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { PollQueue } from '../../../src/queue/poll-queue.ts';
import { startWorker, type RunningWorker } from '../../../src/queue/start-worker.ts';
import type { PollPayload } from '../../../src/queue/job-payloads.ts';
import { eventually } from '../../support/eventually.ts';
import { gate, openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
let queue: PollQueue;
const workers: RunningWorker[] = [];

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  queue = new PollQueue({ connection: scope.connection, prefix: scope.prefix });
});

afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop({ force: true });
  await queue.close();
  await scope.cleanup();
});

function pollWorker(polls: PollPayload[], workMs = 0): void {
  workers.push(
    startWorker(
      'poll',
      async (p) => {
        polls.push(p);
        if (workMs > 0) await new Promise((r) => setTimeout(r, workMs));
        return { kind: 'done' };
      },
      { connection: scope.connection, prefix: scope.prefix, concurrency: 4 },
    ),
  );
}

describe('PollQueue', () => {
  it.each([{ coalesceMs: 0 }, { coalesceMs: 50 }])(
    'turns any burst into one running and one pending poll, and loses none (window $coalesceMs ms)',
    async ({ coalesceMs }) => {
      const burstQueue = new PollQueue({
        connection: scope.connection,
        prefix: scope.prefix,
        webhookCoalesceMs: coalesceMs,
      });
      try {
        const burst = async (): Promise<void> => {
          await Promise.all(Array.from({ length: 50 }, () => burstQueue.enqueuePoll('apps', 'webhook')));
          for (let i = 0; i < 20; i++) await burstQueue.enqueuePoll('apps', 'webhook');
        };
        // Before any worker runs: one pending poll.
        await burst();
        expect(await burstQueue.queue.getJobCounts('waiting', 'delayed')).toMatchObject({
          waiting: coalesceMs > 0 ? 0 : 1,
          delayed: coalesceMs > 0 ? 1 : 0,
        });

        const polls: Array<{ startedAt: number }> = [];
        const firstPoll = gate();
        workers.push(
          startWorker(
            'poll',
            async () => {
              polls.push({ startedAt: performance.now() });
              if (polls.length === 1) await firstPoll.promise;
              return { kind: 'done' };
            },
            { connection: scope.connection, prefix: scope.prefix, concurrency: 4 },
          ),
        );
        await eventually('the first poll to start', () => polls.length === 1);
        // While that poll runs: one more, after it.
        await burst();
        const lastPushAt = performance.now();
        firstPoll.open();
        await eventually('the second poll, then an empty queue', async () => {
          const c = await burstQueue.queue.getJobCounts('waiting', 'delayed', 'active');
          return polls.length === 2 && (c.waiting ?? 0) + (c.delayed ?? 0) + (c.active ?? 0) === 0;
        });
        await new Promise((r) => setTimeout(r, 100 + coalesceMs));
        expect(polls).toHaveLength(2);
        // None lost: the second poll started after the last push.
        expect(polls[1]!.startedAt).toBeGreaterThanOrEqual(lastPushAt);
      } finally {
        await burstQueue.close();
      }
    },
  );

  it('polls after a push that arrives while the previous poll runs', async () => {
    const polls: PollPayload[] = [];
    pollWorker(polls, 300);
    await queue.enqueuePoll('apps', 'webhook');
    await eventually('the first poll', () => polls.length === 1);
    await queue.enqueuePoll('apps', 'webhook');
    await eventually('the poll after the push', () => polls.length === 2, { timeoutMs: 3_000 });
  });

  it('keeps one scheduler per source, updates intervals, removes dropped sources', async () => {
    await queue.syncSchedules([
      { source: 'apps', intervalMs: 30_000 },
      { source: 'infra', intervalMs: 60_000 },
    ]);
    expect((await queue.listSchedules()).sort((a, b) => a.source.localeCompare(b.source))).toEqual([
      { source: 'apps', intervalMs: 30_000 },
      { source: 'infra', intervalMs: 60_000 },
    ]);
    const removed = await queue.syncSchedules([{ source: 'apps', intervalMs: 10_000 }]);
    expect(removed).toEqual(['infra']);
    expect(await queue.listSchedules()).toEqual([{ source: 'apps', intervalMs: 10_000 }]);
    expect(await queue.removeSchedule('apps')).toBe(true);
    expect(await queue.listSchedules()).toEqual([]);
  });

  it('spreads the scheduled polls of many sources over the interval instead of running them all at once', async () => {
    const intervalMs = 30_000;
    const sources = Array.from({ length: 100 }, (_, i) => `team-${i}/apps`);
    await queue.syncSchedules(sources.map((source) => ({ source, intervalMs })));
    const delayed = await queue.queue.getDelayed(0, -1);
    expect(delayed).toHaveLength(100);
    // Each next run's place within the interval, in tenths of it.
    const tenths = new Array<number>(10).fill(0);
    for (const job of delayed) {
      const at = (job.timestamp + job.delay) % intervalMs;
      tenths[Math.floor((at / intervalMs) * 10)] = (tenths[Math.floor((at / intervalMs) * 10)] ?? 0) + 1;
    }
    expect(tenths.filter((n) => n > 0).length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...tenths)).toBeLessThanOrEqual(25);
    // Upserting again (another process, a restart) keeps each source where it was.
    const before = new Map(delayed.map((j) => [(j.data as PollPayload).source, j.timestamp + j.delay]));
    await queue.syncSchedules(sources.map((source) => ({ source, intervalMs })));
    for (const job of await queue.queue.getDelayed(0, -1))
      expect(job.timestamp + job.delay).toBe(before.get((job.data as PollPayload).source));
  });

  it('runs scheduled polls at the interval, once per tick across several workers', async () => {
    const polls: PollPayload[] = [];
    pollWorker(polls);
    pollWorker(polls);
    await queue.upsertSchedule({ source: 'apps', intervalMs: 250 });
    await eventually('three scheduled polls', () => polls.length >= 3, { timeoutMs: 5_000 });
    const started = performance.now();
    const before = polls.length;
    await new Promise((r) => setTimeout(r, 1_000));
    const perSecond = ((polls.length - before) * 1_000) / (performance.now() - started);
    expect(perSecond).toBeLessThanOrEqual(5.5);
    expect(polls.every((p) => p.source === 'apps' && p.reason === 'schedule')).toBe(true);
  });
});
