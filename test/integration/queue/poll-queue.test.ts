// Poll queue against the real Redis: coalesced webhook polls, old per-source schedulers removed.
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
        // An empty queue (nothing waiting, in its coalescing window, or running): no third poll can follow.
        await eventually('the second poll, then an empty queue', async () => {
          const c = await burstQueue.queue.getJobCounts('waiting', 'delayed', 'active');
          return polls.length === 2 && (c.waiting ?? 0) + (c.delayed ?? 0) + (c.active ?? 0) === 0;
        });
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

  it('removes the per-source schedulers an earlier version left, so they add no more polls', async () => {
    // As versions before the poll lease created them: one BullMQ job scheduler per source.
    for (const source of ['apps', 'infra'])
      await queue.queue.upsertJobScheduler(
        `source:${source}`,
        { every: 30_000 },
        { name: 'poll', data: { v: 1, source, reason: 'schedule' } },
      );
    expect((await queue.listSchedules()).map((s) => s.source).sort()).toEqual(['apps', 'infra']);
    expect((await queue.removeSchedules()).sort()).toEqual(['apps', 'infra']);
    expect(await queue.listSchedules()).toEqual([]);
    expect(await queue.queue.getDelayed(0, -1)).toEqual([]);
    expect(await queue.removeSchedules()).toEqual([]);
  });
});
