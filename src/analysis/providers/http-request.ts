// A small HTTP(S) client for metric providers: timeout, body-size bound, per-request TLS skip, http(s) only.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createHostPolicy, hostRefusal, hostRefusalByName, type HostPolicy } from './host-policy.ts';
import { MetricProviderError } from './metric-provider-error.ts';

/** One request. `insecure` skips TLS verification for this request only (never process-wide). */
export interface HttpRequestOptions {
  provider: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  insecure?: boolean;
  /** Which hosts may be reached; default: anything but link-local and metadata addresses. */
  policy?: HostPolicy;
}

const DEFAULT_HOST_POLICY = createHostPolicy();

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

// The largest response body read; a larger response is an error.
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** A metric's `headers: [{key, value}]` as request headers, names lowercased (the last of a name wins). */
export function headersFromList(
  list: ReadonlyArray<{ key: string; value: string }> = [],
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, value } of list) {
    const name = key.toLowerCase();
    // A header named __proto__ would replace the object's prototype instead of adding a header.
    if (name !== '__proto__') headers[name] = value;
  }
  return headers;
}

/**
 * Parses and checks a URL: only http: and https: are allowed; user:password in the URL becomes a
 * Basic Authorization header (and is removed from the URL, so it never appears in messages).
 */
export function checkHttpUrl(provider: string, raw: string): { url: URL; authorization?: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MetricProviderError(provider, 'invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MetricProviderError(
      provider,
      `URL scheme ${JSON.stringify(url.protocol)} is not allowed (use http or https)`,
    );
  }
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    let user: string;
    let password: string;
    try {
      user = decodeURIComponent(url.username);
      password = decodeURIComponent(url.password);
    } catch {
      throw new MetricProviderError(
        provider,
        'the user or password in the URL is not valid percent-encoding',
      );
    }
    authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return authorization === undefined ? { url } : { url, authorization };
}

/**
 * A `lookup` for the request that resolves the host once, refuses it when any of its addresses is
 * refused by `policy`, and hands the checked addresses to the socket: the address connected to is the
 * address checked, so a DNS answer that changes between check and connect (rebinding) gains nothing.
 */
export function checkedLookup(policy: HostPolicy, resolve: ResolveAll = dns.lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '', 4);
        return;
      }
      const list = addresses as dns.LookupAddress[];
      for (const { address } of list) {
        const refusal = hostRefusal(policy, hostname, address);
        if (refusal !== undefined) {
          callback(new HostRefusedError(refusal), '', 4);
          return;
        }
      }
      const first = list[0];
      if (options.all === true) (callback as unknown as AllCallback)(null, list);
      else if (first === undefined) callback(new HostRefusedError(`host ${hostname} has no address`), '', 4);
      else callback(null, first.address, first.family);
    });
  };
}

/** `dns.lookup` with `all: true` (injected by tests to play a DNS server that changes its answers). */
export type ResolveAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

type AllCallback = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;

class HostRefusedError extends Error {
  override readonly name = 'HostRefusedError';
  readonly code = 'rollgate.analysis.host-refused';
}

/**
 * Checks every header (name and value) as Node would when sending it, so a bad one is a measurement
 * error before any request exists. The message names the header, never its value (it may carry a
 * secret).
 */
function checkHeaders(provider: string, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    try {
      http.validateHeaderName(name);
    } catch {
      throw new MetricProviderError(
        provider,
        `header name ${JSON.stringify(name.slice(0, 64))} is not valid`,
      );
    }
    try {
      http.validateHeaderValue(name, value);
    } catch {
      throw new MetricProviderError(
        provider,
        `header ${JSON.stringify(name)} has a value with characters HTTP does not allow (CR, LF or other control characters)`,
      );
    }
  }
}

/**
 * Sends the request and reads the body. Every failure (a bad URL, header or method, a refused host,
 * the network, the timeout, a body over the limit) becomes a MetricProviderError, never a throw from
 * a timer or socket callback. `policy` decides which hosts and addresses may be reached: an IP
 * literal is checked before the request, a name at connect time on the address it resolved to.
 */
export async function sendHttpRequest(options: HttpRequestOptions): Promise<HttpResponse> {
  const { url, authorization } = checkHttpUrl(options.provider, options.url);
  const headers: Record<string, string> = { ...(authorization && { authorization }), ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  checkHeaders(options.provider, headers);
  const method = options.method ?? 'GET';
  if (!/^[A-Za-z]{1,20}$/.test(method))
    throw new MetricProviderError(
      options.provider,
      `method ${JSON.stringify(method.slice(0, 32))} is not valid`,
    );
  const where = `${url.protocol}//${url.host}`;
  const policy = options.policy ?? DEFAULT_HOST_POLICY;
  const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const refusal =
    isIP(literal) !== 0 ? hostRefusal(policy, literal, literal) : hostRefusalByName(policy, literal);
  if (refusal !== undefined)
    throw new MetricProviderError(options.provider, `request to ${where} refused: ${refusal}`);
  return new Promise<HttpResponse>((resolve, reject) => {
    // Set once the request exists; `fail` may run before that (a request Node refuses to create).
    const deadline: { timer?: NodeJS.Timeout } = {};
    let req: http.ClientRequest | undefined;
    const fail = (reason: string): void => {
      clearTimeout(deadline.timer);
      req?.destroy();
      reject(new MetricProviderError(options.provider, reason));
    };
    const requestOptions: https.RequestOptions = { method, headers, lookup: checkedLookup(policy) };
    if (url.protocol === 'https:' && options.insecure === true) {
      // A throwaway agent so the TLS skip applies to this request alone.
      requestOptions.agent = new https.Agent({ rejectUnauthorized: false, keepAlive: false });
    }
    const send = url.protocol === 'https:' ? https.request : http.request;
    try {
      req = send(url, requestOptions, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            fail(`response from ${where} is larger than ${MAX_BODY_BYTES} bytes`);
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(deadline.timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', (error) => fail(`reading the response from ${where} failed: ${error.message}`));
      });
    } catch (error) {
      // Node validates more than checkHeaders does (e.g. the path); whatever it refuses is this measurement's error.
      fail(`request to ${where} could not be made: ${(error as Error).message}`);
      return;
    }
    req.on('error', (error) => {
      const refused = error instanceof HostRefusedError;
      fail(`request to ${where} ${refused ? 'refused' : 'failed'}: ${error.message}`);
    });
    // A whole-request deadline (socket idle timeouts alone would let a slow drip run forever), armed
    // only once the request exists.
    deadline.timer = setTimeout(
      () => fail(`request to ${where} timed out after ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}
