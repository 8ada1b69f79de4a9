// The push router with the real poll queue: which sources a push polls, and what it logs.
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { PollQueue } from '../../../src/queue/poll-queue.ts';
import { createPushRouter, type WatchedSource } from '../../../src/server/push-router.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
let pollQueue: PollQueue;

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  pollQueue = new PollQueue({ connection: scope.connection, prefix: scope.prefix });
});

afterEach(async () => {
  await pollQueue.close();
  await scope.cleanup();
});

describe('createPushRouter', () => {
  it('polls every matching source once, coalesces a repeated push, and never logs URL credentials', async () => {
    let lines = '';
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines += chunk.toString();
        done();
      },
    });
    const sources: WatchedSource[] = [
      { name: 'prod', url: 'https://github.com/acme/apps.git', branch: 'main' },
      { name: 'prod-mirror', url: 'git@github.com:acme/apps.git', branch: 'main' },
      { name: 'prod-release', url: 'https://github.com/acme/apps.git', branch: 'release' },
    ];
    const route = createPushRouter({
      sources,
      pollQueue,
      logger: createLogger({ format: 'json', level: 'info', destination }),
    });
    const notice = {
      provider: 'github' as const,
      deliveryId: 'd1',
      repositoryUrls: ['https://x-access-token:ghs_SECRET123@github.com/acme/apps.git'],
      branch: 'main',
      cause: 'push' as const,
    };
    expect(await route(notice)).toEqual({ sourcesQueued: ['prod', 'prod-mirror'] });
    expect(await route(notice)).toEqual({ sourcesQueued: ['prod', 'prod-mirror'] });
    const jobs = await pollQueue.queue.getJobs(['waiting', 'delayed']);
    expect(jobs.map((j) => j.data.source).sort()).toEqual(['prod', 'prod-mirror']);
    expect(await route({ ...notice, branch: 'feature' })).toEqual({ sourcesQueued: [] });

    expect(lines).toContain('"sources":["prod","prod-mirror"]');
    expect(lines).not.toContain('ghs_SECRET123');
  });
});
