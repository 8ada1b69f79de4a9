// The error the demo raises when it can reach no Redis and cannot start one.

/** No REDIS_URL, nothing answering on 127.0.0.1:6379, and no `redis-server` to start: the user must act. */
export class DemoRedisUnavailableError extends Error {
  override readonly name = 'DemoRedisUnavailableError';
  readonly code = 'rollgate.demo.redis-unavailable';

  constructor(
    message: string,
    readonly tried: readonly string[],
  ) {
    super(message);
  }
}
