import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../../src/cli/commands/run.ts';
import { ConfigError } from '../../../src/config/config-error.ts';

const PASSWORD = 'hunter2-in-argv';

describe('a Redis password on the command line', () => {
  it.each([
    ['--redis', { redis: `redis://:${PASSWORD}@redis.internal:6379` }],
    ['--redis with a user', { redis: `rediss://rollgate:${PASSWORD}@redis.internal:6380/0` }],
    ['--set', { set: [`redis.url=redis://:${PASSWORD}@redis.internal:6379`] }],
  ])(
    'is refused from %s, naming the flag and where to put it instead, without echoing it',
    async (_, flags) => {
      const error = await configFromFlags(flags).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/redis\.url: holds a password/);
      expect((error as Error).message).toMatch(/ROLLGATE_REDIS_URL|redis\.passwordFile/);
      expect((error as Error).message).not.toContain(PASSWORD);
    },
  );

  it('is not needed: a URL without one is taken as before', async () => {
    const config = await configFromFlags({ redis: 'redis://redis.internal:6379' });
    expect(config.redis.url).toBe('redis://redis.internal:6379');
  });
});
