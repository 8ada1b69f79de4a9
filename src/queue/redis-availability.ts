// Says in the log when Redis becomes unreachable, at each reconnect step while it stays so, and when it is back.
import type { Redis } from 'ioredis';
import { systemClock, type Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { isRedisConnectionError } from './redis-connection-error.ts';
import { describeRedisTarget } from './redis-options.ts';

export interface RedisAvailabilityOptions {
  logger: Logger;
  clock?: Clock;
}

/** Where Redis is, for log lines: host and port only (a URL could carry a password). */
export function redisAddress(redis: Redis): string {
  return describeRedisTarget(redis.options);
}

/**
 * Reports the availability of one (shared) ioredis connection. ioredis emits an `error` per failed
 * connect and a `reconnecting` event with the delay its retryStrategy chose: the first is only
 * remembered, each of the second is one backoff step and gets one log line naming the dependency,
 * the attempt and when the next attempt is, so a Redis that stays down costs one line per step of
 * the capped reconnect backoff (see createRedisConnection), not one per error per connection.
 * Connections BullMQ duplicates from this one report nothing: their errors are dropped by
 * startWorker and the queues, since this report already says it.
 */
export function reportRedisAvailability(redis: Redis, options: RedisAvailabilityOptions): void {
  const clock = options.clock ?? systemClock;
  const log = options.logger.child({ dependency: 'redis', address: redisAddress(redis) });
  let lastError: string | undefined;
  let attempts = 0;
  let downSince: Date | undefined;

  redis.on('error', (error: Error) => {
    if (isRedisConnectionError(error)) {
      lastError = error.message;
      return;
    }
    log.warn({ err: error.message }, 'redis error');
  });
  redis.on('reconnecting', (delayMs: unknown) => {
    attempts += 1;
    downSince ??= clock.now();
    const wait = typeof delayMs === 'number' ? delayMs : 0;
    const fields = {
      attempt: attempts,
      nextAttemptAt: new Date(clock.now().getTime() + wait).toISOString(),
      ...(lastError ? { err: lastError } : {}),
    };
    log.warn(
      fields,
      attempts === 1
        ? 'redis unreachable: queues paused, retrying'
        : 'redis still unreachable: queues paused, retrying',
    );
  });
  redis.on('ready', () => {
    if (downSince === undefined) return;
    log.info(
      { attempts, downForMs: clock.now().getTime() - downSince.getTime() },
      'redis reachable again: queues resumed',
    );
    attempts = 0;
    downSince = undefined;
    lastError = undefined;
  });
}
