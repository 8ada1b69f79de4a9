// The error raised when a private redis-server cannot be started or never answers.

/** `program` could not be spawned, exited, or did not answer PING in time; `reason` says which. */
export class RedisServerStartError extends Error {
  override readonly name = 'RedisServerStartError';
  readonly code = 'rollgate.demo.redis-server-start';

  constructor(
    readonly program: string,
    readonly reason: string,
  ) {
    super(`could not start ${program}: ${reason}`);
  }
}
