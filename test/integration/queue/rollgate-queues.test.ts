// Re-deriving all work after Redis was emptied: schedulers, start polls and reconciles come back.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  enqueueEverything,
  openRollgateQueues,
  type RollgateQueues,
} from '../../../src/queue/rollgate-queues.ts';
import { startRedisResetDetector } from '../../../src/queue/redis-reset-detector.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
let queues: RollgateQueues;

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  queues = openRollgateQueues({ connection: scope.connection, prefix: scope.prefix });
});

afterEach(async () => {
  await queues.close();
  await scope.cleanup();
});

/** Deletes every key of this test's prefix: what FLUSHALL does, without touching other tests' keys. */
async function emptyRedis(): Promise<void> {
  const keys = await scope.connection.keys(`{${scope.prefix}}*`);
  if (keys.length > 0) await scope.connection.del(...keys);
}

describe('enqueueEverything', () => {
  const known = {
    sources: [
      { source: 'apps', intervalMs: 30_000 },
      { source: 'infra', intervalMs: 60_000 },
    ],
    rollouts: ['prod/web', 'prod/api', 'staging/web'],
  };

  it('restores polls and reconciles after Redis was emptied, once, however often it runs', async () => {
    let report: Awaited<ReturnType<typeof enqueueEverything>> | undefined;
    const detector = await startRedisResetDetector({
      connection: scope.connection,
      prefix: scope.prefix,
      onReset: async () => {
        report = await enqueueEverything(queues, known);
      },
    });
    try {
      await enqueueEverything(queues, known);
      await emptyRedis();
      expect(await detector.check()).toBe(true);
      expect(report).toEqual({ schedulersRemoved: [], pollsEnqueued: 2, reconcilesEnqueued: 3 });
      await enqueueEverything(queues, known); // a second process doing the same
      // Scheduled polls run in the poll lease's holder: no job scheduler is left in Redis.
      expect(await queues.poll.listSchedules()).toEqual([]);
      const reconciles = await queues.reconcile.queue.getJobs(['waiting']);
      expect(reconciles.map((j) => `${j.data.namespace}/${j.data.name}`).sort()).toEqual([
        'prod/api',
        'prod/web',
        'staging/web',
      ]);
      const startPolls = (await queues.poll.queue.getJobs(['waiting'])).filter(
        (j) => j.data.reason === 'start',
      );
      expect(startPolls.map((j) => j.data.source).sort()).toEqual(['apps', 'infra']);
      const depths = await queues.depths();
      expect(depths.find((d) => d.queue === 'reconcile' && d.state === 'waiting')?.count).toBe(3);
    } finally {
      detector.stop();
    }
  });
});
