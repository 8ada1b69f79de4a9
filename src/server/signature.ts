// HMAC signatures and constant-time comparison for webhook authentication.
import { createHmac, timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Hex HMAC-SHA256 of `body` keyed with `secret`. */
export function hmacSha256Hex(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * A webhook body as the server received it: its bytes, and its HMAC-SHA256 under the provider's signing
 * secret, computed as the chunks arrived (see readWebhookBody) so that checking a signature costs no
 * second pass. Under any other key the HMAC is computed from the bytes.
 */
export interface ReceivedBody {
  readonly raw: Buffer;
  hmacSha256Hex(secret: string): string;
}

/** A {@link ReceivedBody} for `raw`, with the HMAC streamed under `streamed.secret` when given. */
export function receivedBody(raw: Buffer, streamed?: { secret: string; hex: string }): ReceivedBody {
  return {
    raw,
    hmacSha256Hex: (secret) =>
      streamed !== undefined && secret === streamed.secret ? streamed.hex : hmacSha256Hex(secret, raw),
  };
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
  body: Buffer | ReceivedBody,
  prefixed: boolean,
): string | undefined {
  // An empty key signs nothing: whoever knows that no secret is configured could sign anything.
  if (secret.length === 0) return `no secret is configured to check ${headerName}`;
  if (value === undefined) return `missing ${headerName} header`;
  let hex = value.trim();
  if (prefixed) {
    if (!hex.toLowerCase().startsWith('sha256=')) return `${headerName} is not a sha256= signature`;
    hex = hex.slice('sha256='.length);
  }
  const expected = Buffer.isBuffer(body) ? hmacSha256Hex(secret, body) : body.hmacSha256Hex(secret);
  return constantTimeEqual(hex.toLowerCase(), expected)
    ? undefined
    : `${headerName} does not match the body signed with the configured secret`;
}
