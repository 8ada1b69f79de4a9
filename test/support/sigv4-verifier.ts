// Verifies AWS Signature Version 4 on a received request, recomputed from AWS's published algorithm (not with the library Rollgate signs with).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The key the verifier knows, and what it expects the signature to be scoped to. */
export interface Sigv4Expectation {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  service: string;
}

/** A received request, as the server saw it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as on the request line. */
  url: string;
  /** Header names lowercased (Node's IncomingMessage.headers). */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const sha256Hex = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer =>
  createHmac('sha256', key).update(data, 'utf8').digest();

// RFC 3986 unreserved characters stay, everything else is %XX in uppercase hex.
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

// Services other than S3 encode each path segment twice (the path as sent is already encoded once).
function canonicalUri(path: string): string {
  if (path === '') return '/';
  return path
    .split('/')
    .map((segment) => uriEncode(uriEncode(decodeURIComponent(segment))))
    .join('/');
}

function canonicalQuery(search: string): string {
  const pairs = [...new URLSearchParams(search)].map(([k, v]) => [uriEncode(k), uriEncode(v)] as const);
  pairs.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function headerValue(value: string | string[] | undefined): string {
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined.trim().replace(/\s+/g, ' ');
}

/** Why the request's signature is not valid for `expected`, or undefined when it is. */
export function sigv4Refusal(request: ReceivedRequest, expected: Sigv4Expectation): string | undefined {
  const authorization = headerValue(request.headers['authorization']);
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (match === null) return 'no AWS4-HMAC-SHA256 Authorization header';
  const [, keyId, day, region, service, signedList = '', signature = ''] = match;
  if (keyId !== expected.accessKeyId) return 'unknown access key';
  if (region !== expected.region || service !== expected.service) return 'wrong credential scope';
  const amzDate = headerValue(request.headers['x-amz-date']);
  if (!amzDate.startsWith(day ?? '-')) return 'x-amz-date does not match the credential scope';
  const signed = signedList.split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date')) return 'host and x-amz-date must be signed';
  if (expected.sessionToken !== undefined) {
    if (headerValue(request.headers['x-amz-security-token']) !== expected.sessionToken)
      return 'wrong session token';
    if (!signed.includes('x-amz-security-token')) return 'the session token must be signed';
  }
  const url = new URL(request.url, 'http://placeholder');
  const canonicalRequest = [
    request.method,
    canonicalUri(url.pathname),
    canonicalQuery(url.search),
    signed.map((name) => `${name}:${headerValue(request.headers[name])}\n`).join(''),
    signedList,
    sha256Hex(request.body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(
    hmac(hmac(hmac(`AWS4${expected.secretAccessKey}`, day ?? ''), region ?? ''), service ?? ''),
    'aws4_request',
  );
  const expectedSignature = hmac(key, stringToSign).toString('hex');
  const ok = timingSafeEqual(Buffer.from(expectedSignature), Buffer.from(signature));
  return ok ? undefined : 'signature does not match';
}
