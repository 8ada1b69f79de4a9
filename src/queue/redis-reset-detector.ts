// Notices that Redis lost its data (flushed, restarted without persistence, failed over to an empty
// replica) so the process can re-derive all work from Git and the cluster: Redis is disposable.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { silentLogger, type Logger } from '../log/logger.ts';
import { bullPrefix } from './queue-names.ts';

export interface RedisResetDetectorOptions {
  connection: Redis;
  prefix?: string;
  /** How often to look, in ms (default 10 000). */
  intervalMs?: number;
  /** Called once per detected reset; re-enqueue every known source and rollout here. */
  onReset: () => Promise<void> | void;
  logger?: Logger;
}

/** A running detector. */
export interface RedisResetDetector {
  /** The Redis key holding the marker. */
  readonly markerKey: string;
  /** Looks now; true when a reset was detected (and onReset ran). */
  check(): Promise<boolean>;
  stop(): void;
}

/**
 * Keeps a marker key (an epoch id) in Redis. The first process to start writes it; every process
 * remembers the epoch it saw. A missing marker means Redis was emptied: the process writes a new
 * epoch and calls onReset. A different epoch means another process already noticed a reset: this
 * process calls onReset too (enqueues are deduplicated, so doing the work twice is harmless).
 * Detection latency is at most `intervalMs`. A Redis error is logged and the check retried later.
 */
export async function startRedisResetDetector(
  options: RedisResetDetectorOptions,
): Promise<RedisResetDetector> {
  const redis = options.connection;
  const logger = options.logger ?? silentLogger;
  const markerKey = `${bullPrefix(options.prefix)}:epoch`;

  const adopt = async (): Promise<string> => {
    const fresh = randomUUID();
    const written = await redis.set(markerKey, fresh, 'NX');
    return written === 'OK' ? fresh : ((await redis.get(markerKey)) ?? fresh);
  };

  let epoch = await adopt();
  let running: Promise<boolean> | undefined;

  const check = (): Promise<boolean> => {
    running ??= (async () => {
      try {
        const current = await redis.get(markerKey);
        if (current === epoch) return false;
        epoch = current ?? (await adopt());
        logger.warn({ markerKey }, 'Redis was emptied; re-enqueueing all work from Git and the cluster');
        await options.onReset();
        return true;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const timer = setInterval(() => {
    check().catch((error: unknown) => logger.error({ err: error }, 'Redis reset check failed'));
  }, options.intervalMs ?? 10_000);
  timer.unref();

  return { markerKey, check, stop: () => clearInterval(timer) };
}
