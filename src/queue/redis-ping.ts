// One PING of Redis within a time limit, naming the connection error when Redis does not answer.
import type { Redis } from 'ioredis';

/** Redis did not answer in time; `lastConnectionError` says why when the client saw it. */
export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
  readonly code = 'redis.unavailable';
  constructor(
    readonly timeoutMs: number,
    readonly lastConnectionError: string | undefined,
  ) {
    super(
      `no answer to PING within ${timeoutMs} ms${lastConnectionError ? ` (${lastConnectionError})` : ''}`,
    );
  }
}

// Redis refuses the credentials: waiting cannot help, so that error is thrown as it came.
const AUTH_REFUSED = /^(NOAUTH|WRONGPASS|NOPERM)\b/;

/**
 * PINGs Redis. A client that retries forever (ours, for BullMQ) keeps the PING queued while it reconnects,
 * so the limit is ours: past `timeoutMs` this throws {@link RedisUnavailableError} with the last connection
 * error the client reported (ECONNREFUSED, …), or that error itself when Redis refused our credentials.
 */
export async function pingRedis(redis: Redis, timeoutMs: number): Promise<void> {
  let lastError: Error | undefined;
  const onError = (err: Error): void => {
    lastError = err;
  };
  redis.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          if (lastError && AUTH_REFUSED.test(lastError.message)) reject(lastError);
          else reject(new RedisUnavailableError(timeoutMs, lastError?.message));
        }, timeoutMs);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
    redis.off('error', onError);
  }
}
