// Creates the ioredis connections BullMQ needs (blocking-safe: no per-request retry limit).
import { Redis, type RedisOptions } from 'ioredis';

/**
 * Opens an ioredis client for queues and workers. BullMQ's blocking commands require
 * `maxRetriesPerRequest: null`; the client reconnects forever with a capped delay, so a Redis
 * restart pauses work instead of crashing the process.
 */
export function createRedisConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    ...options,
  });
}
