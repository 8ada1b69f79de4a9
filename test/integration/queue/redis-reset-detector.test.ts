// Redis reset detection against the real Redis.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { startRedisResetDetector } from '../../../src/queue/redis-reset-detector.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
});
afterEach(async () => scope.cleanup());

describe('startRedisResetDetector', () => {
  it('calls onReset once when the data is gone, and in every process that shares the Redis', async () => {
    let resetsA = 0;
    let resetsB = 0;
    const a = await startRedisResetDetector({
      connection: scope.connection,
      prefix: scope.prefix,
      onReset: () => void resetsA++,
    });
    const b = await startRedisResetDetector({
      connection: scope.connection,
      prefix: scope.prefix,
      onReset: () => void resetsB++,
    });
    try {
      expect(await a.check()).toBe(false);
      expect(await b.check()).toBe(false);
      // What FLUSHALL does to our keys (the test Redis is shared, so only our prefix is emptied).
      await scope.connection.del(a.markerKey);
      expect(await a.check()).toBe(true);
      expect(await a.check()).toBe(false);
      expect(await b.check()).toBe(true);
      expect(await b.check()).toBe(false);
      expect([resetsA, resetsB]).toEqual([1, 1]);
    } finally {
      a.stop();
      b.stop();
    }
  });
});
