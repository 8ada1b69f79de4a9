// HMAC signatures and constant-time comparison for webhook authentication.
import { createHmac, timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Hex HMAC-SHA256 of `body` keyed with `secret`. */
export function hmacSha256Hex(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * Compares two strings in time independent of where they differ. Both sides are hashed first so
 * that different lengths neither throw nor leak the expected length through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** A single header value (the first when repeated), or undefined. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.length === 0 ? undefined : first;
}

/**
 * Verifies a `sha256=<hex>` (or bare `<hex>` when `prefixed` is false) HMAC header against the body.
 * Returns the reason when it does not match.
 */
export function checkHmacHeader(
  value: string | undefined,
  headerName: string,
  secret: string,
  body: Buffer,
  prefixed: boolean,
): string | undefined {
  if (value === undefined) return `missing ${headerName} header`;
  let hex = value.trim();
  if (prefixed) {
    if (!hex.toLowerCase().startsWith('sha256=')) return `${headerName} is not a sha256= signature`;
    hex = hex.slice('sha256='.length);
  }
  return constantTimeEqual(hex.toLowerCase(), hmacSha256Hex(secret, body))
    ? undefined
    : `${headerName} does not match the body signed with the configured secret`;
}
