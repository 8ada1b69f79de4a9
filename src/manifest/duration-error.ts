// The error thrown when a duration string (Argo/Go style) or integer-seconds value cannot be read.

/** A duration value that is neither Go-style ("1h30m", "250ms") nor a non-negative integer of seconds. */
export class DurationError extends Error {
  override readonly name = 'DurationError';
  readonly code = 'rollgate.spec.duration';

  constructor(
    /** The value exactly as it was given. */
    readonly value: unknown,
    /** Why it was refused, in words a user can act on. */
    readonly reason: string,
  ) {
    super(`invalid duration ${JSON.stringify(value)}: ${reason}`);
  }
}
