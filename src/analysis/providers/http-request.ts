// A small HTTP(S) client for metric providers: timeout, body-size bound, per-request TLS skip, http(s) only.
import http from 'node:http';
import https from 'node:https';
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
}

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
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return authorization === undefined ? { url } : { url, authorization };
}

/** Sends the request and reads the whole body; network failures and timeouts become MetricProviderError. */
export function sendHttpRequest(options: HttpRequestOptions): Promise<HttpResponse> {
  const { url, authorization } = checkHttpUrl(options.provider, options.url);
  const headers: Record<string, string> = { ...(authorization && { authorization }), ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  const where = `${url.protocol}//${url.host}`;
  return new Promise<HttpResponse>((resolve, reject) => {
    // A whole-request deadline (socket idle timeouts alone would let a slow drip run forever).
    const timer = setTimeout(() => {
      req.destroy();
      fail(`request to ${where} timed out after ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    const fail = (reason: string): void => {
      clearTimeout(timer);
      reject(new MetricProviderError(options.provider, reason));
    };
    const requestOptions: https.RequestOptions = { method: options.method ?? 'GET', headers };
    if (url.protocol === 'https:' && options.insecure === true) {
      // A throwaway agent so the TLS skip applies to this request alone.
      requestOptions.agent = new https.Agent({ rejectUnauthorized: false, keepAlive: false });
    }
    const send = url.protocol === 'https:' ? https.request : http.request;
    const req = send(url, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          req.destroy();
          fail(`response from ${where} is larger than ${MAX_BODY_BYTES} bytes`);
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', (error) => fail(`reading the response from ${where} failed: ${error.message}`));
    });
    req.on('error', (error) => fail(`request to ${where} failed: ${error.message}`));
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}
