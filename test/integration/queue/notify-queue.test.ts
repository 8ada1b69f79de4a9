// The notify queue on the real Redis: a key is added once, whoever adds it and however often; sent marks survive a new producer.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import type { NotifyPayload } from '../../../src/queue/job-payloads.ts';
import { NOTIFY_ONCE_TTL_SECONDS, NotifyQueue, notifyJobId } from '../../../src/queue/notify-queue.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
let queues: NotifyQueue[] = [];
beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
});
afterEach(async () => {
  await Promise.all(queues.map((q) => q.close()));
  queues = [];
  await scope.cleanup();
});

const open = (): NotifyQueue => {
  const queue = new NotifyQueue({ connection: scope.connection, prefix: scope.prefix });
  queues.push(queue);
  return queue;
};

const event = (key: string): NotifyPayload => ({
  v: 1,
  kind: 'event',
  key,
  trigger: 'on-rollout-completed',
  namespace: 'shop',
  name: 'web',
  rollout: { metadata: { name: 'web' } },
});

describe('NotifyQueue', () => {
  it('adds a key once among producers racing for it, and keeps the mark for the TTL', async () => {
    const [a, b] = [open(), open()];
    const results = await Promise.all([
      a.add(event('u1|h1|on-rollout-completed|-')),
      b.add(event('u1|h1|on-rollout-completed|-')),
      a.add(event('u1|h1|on-rollout-completed|-')),
    ]);
    expect(results.sort()).toEqual(['added', 'duplicate', 'duplicate']);
    expect(await a.queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const job = await a.queue.getJob(notifyJobId(event('u1|h1|on-rollout-completed|-')));
    expect(job?.data).toEqual(event('u1|h1|on-rollout-completed|-'));
    // Once its job is gone (finished jobs are dropped after an hour), the mark still says "added".
    await job?.remove();
    expect(await b.add(event('u1|h1|on-rollout-completed|-'))).toBe('duplicate');
    const marks = await scope.connection.keys(`{${scope.prefix}}:notify:once:*`);
    expect(marks).toHaveLength(1);
    const ttl = await scope.connection.ttl(marks[0]!);
    expect(ttl).toBeGreaterThan(NOTIFY_ONCE_TTL_SECONDS - 60);
    // Another key is another notification.
    expect(await b.add(event('u1|h1|on-rollout-completed|x'))).toBe('added');
  });

  it('forgets the mark of an add that failed, so it can be added again', async () => {
    const queue = open();
    // The fault: BullMQ's add fails after the mark was set (Redis went away between the two commands).
    queue.queue.add = () => Promise.reject(new Error('Connection is closed.'));
    await expect(queue.add(event('k-failed'))).rejects.toThrow('Connection is closed.');
    expect(await scope.connection.keys(`{${scope.prefix}}:notify:once:*`)).toEqual([]);
    const fresh = open();
    expect(await fresh.add(event('k-failed'))).toBe('added');
  });

  it('remembers a sent delivery for any producer', async () => {
    const [a, b] = [open(), open()];
    const delivery = { kind: 'delivery' as const, key: 'u1|h1|on-rollout-completed|-|slack|deploys|t' };
    expect(await b.wasSent(delivery)).toBe(false);
    await a.markSent(delivery);
    expect(await b.wasSent(delivery)).toBe(true);
    expect(notifyJobId(delivery)).toMatch(/^delivery-[0-9a-f]{40}$/);
  });
});
