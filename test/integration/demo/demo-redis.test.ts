// How the demo finds Redis: an explicit URL, REDIS_URL, the local one, a private redis-server, or clear advice.
import { describe, expect, inject, it } from 'vitest';
import { DemoRedisUnavailableError, findDemoRedis, redisAnswers } from '../../../src/demo/index.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';

/** A Redis URL that does not answer: a loopback port that was free and is closed again. */
const silentRedisUrl = async (): Promise<string> => `redis://127.0.0.1:${await closedLoopbackPort()}`;

describe('findDemoRedis', () => {
  it('uses REDIS_URL when it answers, and leaves it running', async () => {
    const url = inject('redisUrl');
    const redis = await findDemoRedis({ env: { REDIS_URL: url } });
    expect(redis).toMatchObject({ url, origin: 'REDIS_URL' });
    await redis.stop();
    expect(await redisAnswers(url)).toBe(true);
  });

  it('refuses a REDIS_URL that does not answer, naming it, instead of trying anything else', async () => {
    const url = await silentRedisUrl();
    const error = await findDemoRedis({ env: { REDIS_URL: url } }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DemoRedisUnavailableError);
    expect((error as DemoRedisUnavailableError).code).toBe('rollgate.demo.redis-unavailable');
    expect((error as Error).message).toContain(url);
  });

  it('prefers --redis to REDIS_URL', async () => {
    const url = inject('redisUrl');
    const redis = await findDemoRedis({ url, env: { REDIS_URL: await silentRedisUrl() } });
    expect(redis).toMatchObject({ url, origin: 'given' });
  });

  it('uses the local Redis when REDIS_URL is not set and it answers, and leaves it running', async () => {
    const url = inject('redisUrl');
    const redis = await findDemoRedis({ env: {}, localUrl: url, redisServer: '/nonexistent/redis-server' });
    expect(redis).toMatchObject({ url, origin: 'local' });
    await redis.stop();
    expect(await redisAnswers(url)).toBe(true);
  });

  it('starts a private redis-server when nothing answers, and stops it afterwards', async () => {
    const redis = await findDemoRedis({ env: {}, localUrl: await silentRedisUrl() });
    expect(redis.origin).toBe('private');
    expect(await redisAnswers(redis.url)).toBe(true);
    await redis.stop();
    expect(await redisAnswers(redis.url)).toBe(false);
  });

  it('says what to do when there is no Redis and no redis-server', async () => {
    const error = await findDemoRedis({
      env: {},
      localUrl: await silentRedisUrl(),
      redisServer: '/nonexistent/redis-server',
    }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DemoRedisUnavailableError);
    expect((error as Error).message).toContain('"/nonexistent/redis-server" could not be started');
    expect((error as Error).message).toContain('apt-get install redis-server');
    expect((error as Error).message).toContain('REDIS_URL=');
  });
});
