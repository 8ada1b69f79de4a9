// The error for a notification a service did not take: transient ones are retried, the others are not.

/**
 * A send that failed. `transient` (network, 5xx, 429) means the queue retries it with backoff, at least
 * `retryAfterMs` later when the service said so; otherwise (401, 404, a refused payload) a human must act.
 * The message names the service and the answer, never the URL or token (they can carry secrets).
 */
export class NotificationDeliveryError extends Error {
  override readonly name = 'NotificationDeliveryError';
  readonly code = 'notify.delivery.failed';

  constructor(
    readonly service: string,
    reason: string,
    readonly transient: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(`${service}: ${reason}`);
  }
}
