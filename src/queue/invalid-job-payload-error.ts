// Error: a job's data is not a valid payload for its queue (written by an older or foreign producer).

/**
 * A job whose data does not match its queue's payload schema; retrying cannot help. `field` is the path
 * of the first field that failed (`rollout`, `objects.3.name`; empty when the data is not an object).
 * The message names fields and what was expected, never the values (a job may be hostile or huge).
 */
export class InvalidJobPayloadError extends Error {
  override readonly name = 'InvalidJobPayloadError';
  readonly code = 'rollgate.queue.invalid-payload';

  constructor(
    readonly queue: string,
    readonly jobId: string | undefined,
    readonly field: string,
    readonly detail: string,
  ) {
    super(
      `job ${jobId ?? '(no id)'} on queue ${queue} has an invalid payload${field ? ` (field ${field})` : ''}: ${detail}`,
    );
  }
}
