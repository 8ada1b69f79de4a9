// The redis.* configuration → ioredis options, one row per accepted form, and the forms the config refuses.
import { describe, expect, it } from 'vitest';
import { configSchema, ConfigError, loadConfig, type RedisSettings } from '../../../src/config/index.ts';
import { parseRedisUrl, redactRedisUrl, RedisUrlError } from '../../../src/config/redis-url.ts';
import { describeRedisTarget, RedisCaFileError, redisOptions } from '../../../src/queue/redis-options.ts';

/** The redis settings as the schema completes them from `given`. */
function settings(given: Record<string, unknown>): RedisSettings {
  return configSchema.parse({ redis: given }).redis;
}

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n');
const files: Record<string, Buffer> = {
  '/etc/rollgate/redis-ca.pem': CA,
};
const readFile = (path: string): Buffer => {
  const content = files[path];
  if (content === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return content;
};
const env = { REDIS_PASSWORD: 'from-env', SENTINEL_PASSWORD: 's3nt' };

describe('redisOptions', () => {
  const rows: { name: string; given: Record<string, unknown>; want: Record<string, unknown> }[] = [
    {
      name: 'the default',
      given: {},
      want: { host: '127.0.0.1', port: 6379 },
    },
    {
      name: 'redis:// with host, port and database',
      given: { url: 'redis://redis.rollgate.svc:6380/2' },
      want: { host: 'redis.rollgate.svc', port: 6380, db: 2 },
    },
    {
      name: 'redis:// with a password only (requirepass), percent-decoded',
      given: { url: 'redis://:p%40ss%3Aword@10.0.0.5' },
      want: { host: '10.0.0.5', port: 6379, password: 'p@ss:word' },
    },
    {
      name: 'redis:// with an ACL user and password',
      given: { url: 'redis://rollgate:secret@[::1]:7000' },
      want: { host: '::1', port: 7000, username: 'rollgate', password: 'secret' },
    },
    {
      name: 'the password from passwordEnv, the user from username',
      given: { url: 'redis://redis:6379', username: 'rollgate', passwordEnv: 'REDIS_PASSWORD' },
      want: { host: 'redis', port: 6379, username: 'rollgate', password: 'from-env' },
    },
    {
      name: 'rediss:// without a CA file: TLS with Node’s CAs',
      given: { url: 'rediss://redis.example.com:6380' },
      want: { host: 'redis.example.com', port: 6380, tls: {} },
    },
    {
      name: 'rediss:// with tlsCaFile: the CA is read into tls.ca',
      given: { url: 'rediss://:pw@redis.example.com', tlsCaFile: '/etc/rollgate/redis-ca.pem' },
      want: { host: 'redis.example.com', port: 6379, password: 'pw', tls: { ca: CA } },
    },
    {
      name: 'redis+sentinel:// with several Sentinels, a master and a database',
      given: { url: 'redis+sentinel://:pw@s1:26379,s2,[::1]:26380/mymaster/3' },
      want: {
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'mymaster',
        password: 'pw',
        db: 3,
      },
    },
    {
      name: 'sentinels and name as keys, with a Sentinel password from the environment',
      given: {
        sentinels: ['s1:5000', 's2:5001'],
        name: 'mymaster',
        passwordEnv: 'REDIS_PASSWORD',
        sentinelPasswordEnv: 'SENTINEL_PASSWORD',
      },
      want: {
        sentinels: [
          { host: 's1', port: 5000 },
          { host: 's2', port: 5001 },
        ],
        name: 'mymaster',
        password: 'from-env',
        sentinelPassword: 's3nt',
      },
    },
    {
      name: 'rediss+sentinel://: TLS to the Sentinels and to the master',
      given: { url: 'rediss+sentinel://s1:26379/mymaster', tlsCaFile: '/etc/rollgate/redis-ca.pem' },
      want: {
        sentinels: [{ host: 's1', port: 26379 }],
        name: 'mymaster',
        tls: { ca: CA },
        sentinelTLS: { ca: CA },
        enableTLSForSentinelMode: true,
      },
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(redisOptions(settings(row.given), { env, readFile })).toStrictEqual(row.want);
    });

  it('reads the password from passwordFile, trimmed', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'rollgate-redis-pw-'));
    try {
      await writeFile(join(dir, 'password'), 'from-file\n');
      const options = redisOptions(settings({ passwordFile: join(dir, 'password') }), { env, readFile });
      expect(options.password).toBe('from-file');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without the password variable it names, and does not say a value', () => {
    const given = settings({ passwordEnv: 'NOT_SET' });
    expect(() => redisOptions(given, { env: {}, readFile })).toThrow(
      expect.objectContaining({ code: 'config.secret-unavailable' }),
    );
  });

  it('an unreadable CA file is a typed error naming the file', () => {
    const given = settings({ url: 'rediss://r', tlsCaFile: '/missing.pem' });
    const thrown = (() => {
      try {
        redisOptions(given, { env, readFile });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(RedisCaFileError);
    expect(thrown).toMatchObject({ code: 'config.redis-ca-unreadable', file: '/missing.pem' });
  });

  it('describes the target for logs without the password', () => {
    const plain = redisOptions(settings({ url: 'redis://:hunter2@r:6380' }), { env, readFile });
    const sentinel = redisOptions(settings({ url: 'redis+sentinel://:hunter2@a:1,b:2/m' }), {
      env,
      readFile,
    });
    expect(describeRedisTarget(plain)).toBe('r:6380');
    expect(describeRedisTarget(sentinel)).toBe('sentinel master m via a:1,b:2');
    expect(redactRedisUrl('redis://user:hunter2@r:6380/1')).toBe('redis://user:***@r:6380/1');
  });
});

describe('redis configuration refused', () => {
  const rows: { name: string; given: Record<string, unknown>; path: string; message: RegExp }[] = [
    { name: 'another scheme', given: { url: 'http://r' }, path: 'redis.url', message: /is not redis:\/\// },
    { name: 'query parameters', given: { url: 'redis://r?db=1' }, path: 'redis.url', message: /query/ },
    {
      name: 'a sentinel URL without a master',
      given: { url: 'redis+sentinel://s1,s2' },
      path: 'redis.url',
      message: /master/,
    },
    {
      name: 'several hosts without +sentinel',
      given: { url: 'redis://a,b' },
      path: 'redis.url',
      message: /several hosts/,
    },
    {
      name: 'a password in the URL and a password file',
      given: { url: 'redis://:pw@r', passwordFile: '/p' },
      path: 'redis.passwordFile',
      message: /in one place/,
    },
    {
      name: 'a CA file without TLS',
      given: { url: 'redis://r', tlsCaFile: '/ca' },
      path: 'redis.tlsCaFile',
      message: /rediss/,
    },
    {
      name: 'sentinels without a name',
      given: { sentinels: ['s1:26379'] },
      path: 'redis.name',
      message: /master/,
    },
    {
      name: 'sentinels both in the URL and as keys',
      given: { url: 'redis+sentinel://s1/m', sentinels: ['s2:26379'], name: 'm' },
      path: 'redis.sentinels',
      message: /one place/,
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const overrides = Object.fromEntries(
        Object.entries(row.given).map(([key, value]) => [
          `redis.${key}`,
          typeof value === 'string' ? value : JSON.stringify(value),
        ]),
      );
      let thrown: unknown;
      try {
        loadConfig({ env: {}, overrides });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      const problem = (thrown as ConfigError).problems.find((p) => p.path === row.path);
      expect(problem?.message, JSON.stringify((thrown as ConfigError).problems)).toMatch(row.message);
    });

  it('never echoes the password of a URL it refuses', () => {
    expect(() => parseRedisUrl('redis://:hunter2@r?x=1')).toThrow(RedisUrlError);
    expect(() => parseRedisUrl('redis://:hunter2@r?x=1')).toThrow(/redis:\/\/:\*\*\*@r\?x=1/);
    try {
      loadConfig({ env: {}, overrides: { 'redis.url': 'redis://:hunter2@r?x=1' } });
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('hunter2');
      return;
    }
    expect.unreachable('the URL was accepted');
  });
});
