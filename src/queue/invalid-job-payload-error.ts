// Error: a job's data is not a valid payload for its queue (written by an older or foreign producer).

/** A job whose data does not match its queue's payload schema; retrying cannot help. */
export class InvalidJobPayloadError extends Error {
  override readonly name = 'InvalidJobPayloadError';
  readonly code = 'rollgate.queue.invalid-payload';

  constructor(
    readonly queue: string,
    readonly jobId: string | undefined,
    readonly detail: string,
  ) {
    super(`job ${jobId ?? '(no id)'} on queue ${queue} has an invalid payload: ${detail}`);
  }
}
