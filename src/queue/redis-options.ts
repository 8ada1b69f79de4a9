// Turns the redis.* configuration into the ioredis options every Rollgate Redis client (BullMQ's too) uses.
import { readFileSync } from 'node:fs';
import type { RedisOptions } from 'ioredis';
import { parseRedisUrl, type RedisHost } from '../config/redis-url.ts';
import type { RedisSettings } from '../config/schema.ts';
import { resolveSecret } from '../config/secret-source.ts';

/** The TLS CA file named by `redis.tlsCaFile` cannot be read. */
export class RedisCaFileError extends Error {
  override readonly name = 'RedisCaFileError';
  readonly code = 'config.redis-ca-unreadable';
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`redis.tlsCaFile ${file} cannot be read: ${reason}`);
  }
}

/** What redisOptions reads besides the settings (tests pass their own). */
export interface RedisOptionsSources {
  env?: Record<string, string | undefined>;
  readFile?: (path: string) => Buffer;
}

function sentinelHost(address: string): RedisHost {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(address);
  return { host: match?.[1] ?? match?.[2] ?? address, port: match?.[3] ? Number(match[3]) : 26379 };
}

/**
 * The ioredis options for `settings` (validated by the config schema): address or Sentinels, user,
 * password (from the URL, `passwordFile` or `passwordEnv`), database and TLS. The connection and
 * retry behaviour is added by createRedisConnection. BullMQ duplicates this client for its workers and
 * blocking reads, and ioredis's duplicate keeps every option, so one mapping serves all Redis users.
 * Secrets are read here, at open time, so a rotated file is picked up by a restart.
 */
export function redisOptions(settings: RedisSettings, sources: RedisOptionsSources = {}): RedisOptions {
  const env = sources.env ?? process.env;
  const url = parseRedisUrl(settings.url);
  const options: RedisOptions = {};

  const password =
    url.password ??
    resolveSecret(
      'redis.password',
      {
        ...(settings.passwordFile !== undefined ? { secretFile: settings.passwordFile } : {}),
        ...(settings.passwordEnv !== undefined ? { secretEnv: settings.passwordEnv } : {}),
      },
      env,
    );
  const username = url.username ?? settings.username;
  if (username !== undefined) options.username = username;
  if (password !== undefined) options.password = password;
  if (url.db !== undefined) options.db = url.db;

  if (url.tls) {
    let ca: Buffer | undefined;
    if (settings.tlsCaFile !== undefined) {
      try {
        ca = (sources.readFile ?? readFileSync)(settings.tlsCaFile);
      } catch (err) {
        throw new RedisCaFileError(settings.tlsCaFile, (err as NodeJS.ErrnoException).code ?? String(err));
      }
    }
    options.tls = ca !== undefined ? { ca } : {};
  }

  const sentinels =
    url.sentinelMaster !== undefined ? url.hosts : settings.sentinels.map((address) => sentinelHost(address));
  const master = url.sentinelMaster ?? settings.name;
  if (sentinels.length > 0 && master !== undefined) {
    options.sentinels = sentinels.map(({ host, port }) => ({ host, port }));
    options.name = master;
    const sentinelPassword = resolveSecret(
      'redis.sentinelPassword',
      {
        ...(settings.sentinelPasswordFile !== undefined ? { secretFile: settings.sentinelPasswordFile } : {}),
        ...(settings.sentinelPasswordEnv !== undefined ? { secretEnv: settings.sentinelPasswordEnv } : {}),
      },
      env,
    );
    if (sentinelPassword !== undefined) options.sentinelPassword = sentinelPassword;
    if (url.tls) {
      // The Sentinels are asked over TLS too, and the master they name is connected to with the same TLS.
      options.enableTLSForSentinelMode = true;
      options.sentinelTLS = options.tls ?? {};
    }
    return options;
  }
  const [server] = url.hosts;
  if (server !== undefined) {
    options.host = server.host;
    options.port = server.port;
  }
  return options;
}

/** Where Redis is, for log lines: never the password. */
export function describeRedisTarget(options: RedisOptions): string {
  if (options.sentinels && options.sentinels.length > 0)
    return `sentinel master ${options.name ?? '?'} via ${options.sentinels
      .map((s) => `${s.host ?? '?'}:${s.port ?? 26379}`)
      .join(',')}`;
  if (options.path) return options.path;
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}${options.tls ? ' (TLS)' : ''}`;
}
