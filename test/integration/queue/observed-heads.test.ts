// The newest head a poll saw, in Redis: later-started ref checks win, whatever order they answer in.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { RedisObservedHeads } from '../../../src/queue/observed-heads.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
let heads: RedisObservedHeads;

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  heads = new RedisObservedHeads(scope.connection, scope.prefix);
});

afterEach(async () => {
  await scope.cleanup();
});

describe('RedisObservedHeads', () => {
  it('keeps the head of the ref check that started last, even when an earlier one answers after it', async () => {
    expect(await heads.newest('apps')).toBeUndefined();
    const slow = await heads.ticket('apps');
    const fast = await heads.ticket('apps');
    expect(await heads.record('apps', fast, 'b'.repeat(40))).toBe(true);
    expect(await heads.record('apps', slow, 'a'.repeat(40))).toBe(false);
    expect(await heads.newest('apps')).toBe('b'.repeat(40));
    expect(await heads.newest('infra')).toBeUndefined();
  });

  it('does not let a ticket taken before Redis was emptied outrank the ones taken after', async () => {
    for (let i = 0; i < 5; i++) await heads.ticket('apps');
    const beforeReset = await heads.ticket('apps');
    // Redis emptied (only this test's keys: the test Redis is shared by parallel test files).
    await scope.connection.del(`{${scope.prefix}}:observed-head:apps`);
    expect(await heads.record('apps', beforeReset, 'a'.repeat(40))).toBe(true);
    const afterReset = await heads.ticket('apps');
    expect(afterReset).toBeGreaterThan(beforeReset);
    expect(await heads.record('apps', afterReset, 'b'.repeat(40))).toBe(true);
    expect(await heads.newest('apps')).toBe('b'.repeat(40));
  });
});
