// How the demo finds Redis: an explicit URL, REDIS_URL, the local one, a private redis-server, or clear advice.
import { createServer } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { DemoRedisUnavailableError, findDemoRedis, redisAnswers } from '../../../src/demo/index.ts';

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('findDemoRedis', () => {
  it('uses REDIS_URL when it answers, and leaves it running', async () => {
    const url = inject('redisUrl');
    const redis = await findDemoRedis({ env: { REDIS_URL: url } });
    expect(redis).toMatchObject({ url, origin: 'REDIS_URL' });
    await redis.stop();
    expect(await redisAnswers(url)).toBe(true);
  });

  it('refuses a REDIS_URL that does not answer, naming it, instead of trying anything else', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const error = await findDemoRedis({ env: { REDIS_URL: url } }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DemoRedisUnavailableError);
    expect((error as DemoRedisUnavailableError).code).toBe('rollgate.demo.redis-unavailable');
    expect((error as Error).message).toContain(url);
  });

  it('starts a private redis-server when nothing answers, and stops it afterwards', async () => {
    const redis = await findDemoRedis({ env: {}, localUrl: `redis://127.0.0.1:${await closedPort()}` });
    expect(redis.origin).toBe('private');
    expect(await redisAnswers(redis.url)).toBe(true);
    await redis.stop();
    expect(await redisAnswers(redis.url)).toBe(false);
  });

  it('says what to do when there is no Redis and no redis-server', async () => {
    const error = await findDemoRedis({
      env: {},
      localUrl: `redis://127.0.0.1:${await closedPort()}`,
      redisServer: '/nonexistent/redis-server',
    }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DemoRedisUnavailableError);
    expect((error as Error).message).toContain('apt-get install redis-server');
    expect((error as Error).message).toContain('REDIS_URL=');
  });
});
