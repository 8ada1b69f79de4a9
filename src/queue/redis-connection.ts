// Creates the ioredis connections BullMQ needs (blocking-safe: no per-request retry limit).
import { Redis, type RedisOptions } from 'ioredis';
import { retryDelayMs, type RetryBackoff } from '../clock/capped-backoff.ts';

/**
 * How a lost Redis connection is retried: after 250 ms, doubling up to 10 s apart, the last fifth of
 * each delay random. Each step is one log line (see reportRedisAvailability), so the cap also bounds how often a Redis that
 * stays down is reported; 10 s is also the most a recovered Redis waits to be noticed.
 */
export const REDIS_RECONNECT_BACKOFF: RetryBackoff = { baseMs: 250, capMs: 10_000, jitter: 0.2 };

/**
 * Opens an ioredis client for queues and workers, from a URL (tests, tools) or from the options
 * redisOptions made of the configuration. BullMQ's blocking commands require
 * `maxRetriesPerRequest: null`; the client reconnects forever with capped exponential backoff, so a
 * Redis restart pauses work instead of crashing the process.
 */
export function createRedisConnection(target: string | RedisOptions, options: RedisOptions = {}): Redis {
  const base: RedisOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => retryDelayMs(times, REDIS_RECONNECT_BACKOFF),
  };
  return typeof target === 'string'
    ? new Redis(target, { ...base, ...options })
    : new Redis({ ...base, ...target, ...options });
}
