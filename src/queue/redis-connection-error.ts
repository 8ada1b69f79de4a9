// Which Redis errors mean "the connection is down" (the availability report covers them) rather than a failed command.

/** Socket-level error codes: Redis is unreachable or the connection broke. */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);

/** What ioredis and BullMQ throw at commands cut off by a closing or closed connection. */
const CONNECTION_ERROR_MESSAGES = [
  'Connection is closed',
  "Stream isn't writeable",
  'Socket closed unexpectedly',
];

/**
 * True when `error` says only that the connection to Redis is down or was closed. Read by shape
 * (`code`, `message`), since ioredis and BullMQ each have their own error classes for it.
 */
export function isRedisConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  return typeof message === 'string' && CONNECTION_ERROR_MESSAGES.some((m) => message.includes(m));
}
