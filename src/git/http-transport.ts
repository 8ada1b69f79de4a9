// The HTTP client handed to isomorphic-git: counts requests, remembers capability adverts, answers known tips.
import { createHash } from 'node:crypto';
import nodeHttp from 'isomorphic-git/http/node';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git/http/node';
import type { Clock } from '../clock/clock.ts';
import { systemClock } from '../clock/clock.ts';

/** A request whose connection stays silent this long fails (the remote hangs); not a cap on downloads. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** How long a remembered capability advertisement is trusted before it is asked for again. */
export const CAPABILITIES_TTL_MS = 10 * 60_000;

interface RememberedAnswer {
  statusCode: number;
  statusMessage: string;
  headers: Record<string, string>;
  body: Uint8Array;
  storedAt: number;
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

function repositoryOf(url: string): string {
  return url.replace(/\/(info\/refs.*|git-upload-pack|git-receive-pack)$/, '');
}

async function collect(body: AsyncIterableIterator<Uint8Array> | undefined): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function* replay(body: Uint8Array): AsyncIterableIterator<Uint8Array> {
  yield body;
}

/** A response body larger than the transport accepts (a fetch's pack past `git.maxPackBytes`). */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  readonly code = 'git.response-too-large';

  constructor(
    readonly url: string,
    readonly limit: number,
  ) {
    super(`the answer to ${url} is larger than ${limit} bytes`);
  }
}

/** Passes `body` through, throwing once more than `limit` bytes went by (nothing past them is read). */
async function* capped(
  body: AsyncIterableIterator<Uint8Array>,
  url: string,
  limit: number,
): AsyncIterableIterator<Uint8Array> {
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen > limit) throw new ResponseTooLargeError(url, limit);
    yield chunk;
  }
}

const UPLOAD_PACK_ADVERT_SUFFIX = '/info/refs?service=git-upload-pack';
const SERVICE_LINE = '# service=git-upload-pack\n';

function pktLine(text: string): string {
  return `${(Buffer.byteLength(text) + 4).toString(16).padStart(4, '0')}${text}`;
}

/**
 * The capability list of a protocol v1 upload-pack advertisement (what follows the NUL of its first ref
 * line, newline included), or undefined when the body is not one.
 */
function v1AdvertCapabilities(body: Uint8Array): string | undefined {
  const text = Buffer.from(body).toString('latin1');
  let at = 0;
  const lines: string[] = [];
  while (at + 4 <= text.length && lines.length < 2) {
    const length = Number.parseInt(text.slice(at, at + 4), 16);
    if (Number.isNaN(length)) return undefined;
    if (length === 0) {
      at += 4;
      continue;
    }
    lines.push(text.slice(at + 4, at + length));
    at += length;
  }
  if (lines[0] !== SERVICE_LINE || lines[1] === undefined) return undefined;
  const nul = lines[1].indexOf('\0');
  return nul === -1 ? undefined : lines[1].slice(nul + 1);
}

/** A protocol v1 upload-pack advertisement listing only `ref` at `oid`, with `capabilities`. */
export function knownTipAdvert(ref: string, oid: string, capabilities: string): Uint8Array {
  return Buffer.from(
    `${pktLine(SERVICE_LINE)}0000${pktLine(`${oid} ${ref}\0${capabilities}`)}0000`,
    'latin1',
  );
}

/**
 * An isomorphic-git HttpClient over `isomorphic-git/http/node`.
 *
 * Why it remembers answers: with protocol v2, isomorphic-git's `listServerRefs` first GETs
 * `info/refs` (a capability advertisement that lists no refs and does not change between polls) and
 * then POSTs `ls-refs`. Answering the GET from memory makes every later ref check exactly one request.
 * Only v2 capability adverts (and the 401 challenge to a request without credentials) are remembered,
 * never a v1 ref advertisement; anything going wrong with a repository forgets what was remembered for it.
 */
export class GitHttpTransport implements HttpClient {
  private readonly remembered = new Map<string, RememberedAnswer>();
  /** Capabilities of each repository's last v1 advertisement (per credentials), for {@link withKnownTip}. */
  private readonly v1Capabilities = new Map<string, { capabilities: string; storedAt: number }>();
  private sent = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly inner: HttpClient = nodeHttp,
    private readonly idleTimeoutMs: number = DEFAULT_IDLE_TIMEOUT_MS,
    /**
     * Largest answer read from a POST (a fetch's pack: isomorphic-git holds it whole in memory), past
     * which the body fails with {@link ResponseTooLargeError}.
     */
    private readonly maxResponseBytes: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Requests that went over the network (answers from memory are not counted). */
  get requestCount(): number {
    return this.sent;
  }

  /** Forgets everything remembered for the repository of `url` (something went wrong with it). */
  private forget(url: string): void {
    const prefix = `${repositoryOf(url)} `;
    for (const key of this.remembered.keys()) if (key.startsWith(prefix)) this.remembered.delete(key);
    for (const key of this.v1Capabilities.keys()) if (key.startsWith(prefix)) this.v1Capabilities.delete(key);
  }

  /**
   * An HttpClient for one fetch of `ref` whose commit `oid` a ref check has just returned. Why: a fetch
   * (isomorphic-git speaks protocol v1 for it) starts by asking for the v1 advertisement, i.e. for the
   * branch head again. This client answers that request from memory, listing only `ref` at `oid` with
   * the capabilities the repository advertised last time, so the fetch costs one request: the pack.
   * Without remembered capabilities (first fetch, TTL passed, something failed) the request goes out
   * as usual. If the server no longer has `oid`, the pack request brings no such commit (GitSource
   * checks) and the caller must fetch again without a known tip.
   */
  withKnownTip(ref: string, oid: string): HttpClient {
    return {
      request: async (request) => {
        if (!this.isV1Advert(request)) return this.request(request);
        const caps = this.v1Capabilities.get(this.keyOf(request));
        if (caps && this.clock.now().getTime() - caps.storedAt < CAPABILITIES_TTL_MS) {
          return {
            url: request.url,
            method: 'GET',
            statusCode: 200,
            statusMessage: 'OK',
            headers: { 'content-type': 'application/x-git-upload-pack-advertisement' },
            body: replay(knownTipAdvert(ref, oid, caps.capabilities)),
          };
        }
        // A request without credentials to a repository that wants some gets the remembered challenge,
        // so isomorphic-git asks onAuth and comes back with credentials (then answered from memory).
        const challenge = this.remembered.get(this.keyOf(request));
        if (
          challenge?.statusCode === 401 &&
          this.clock.now().getTime() - challenge.storedAt < CAPABILITIES_TTL_MS
        )
          return this.replayAnswer(request, challenge);
        return this.request(request);
      },
    };
  }

  request = async (request: GitHttpRequest): Promise<GitHttpResponse> => {
    const key = this.keyFor(request);
    if (key !== undefined) {
      const hit = this.remembered.get(key);
      if (hit && this.clock.now().getTime() - hit.storedAt < CAPABILITIES_TTL_MS) {
        return this.replayAnswer(request, hit);
      }
    }
    this.sent += 1;
    let response: GitHttpResponse;
    try {
      // isomorphic-git sets no timeout: without one a remote that accepts and never answers hangs a poll.
      const fetchOptions: Record<string, unknown> = {
        timeout: this.idleTimeoutMs,
        ...(request.fetchOptions ?? {}),
      };
      response = await this.inner.request({ ...request, fetchOptions });
    } catch (error) {
      this.forget(request.url);
      throw error;
    }
    if (response.statusCode >= 500 || (request.method === 'POST' && response.statusCode !== 200)) {
      this.forget(request.url);
    }
    if (request.method === 'POST' && response.body && Number.isFinite(this.maxResponseBytes)) {
      response = { ...response, body: capped(response.body, request.url, this.maxResponseBytes) };
    }
    if (this.isV1Advert(request) && this.worthRemembering(request, response) && response.statusCode === 200) {
      const body = await collect(response.body);
      const capabilities = v1AdvertCapabilities(body);
      if (capabilities !== undefined)
        this.v1Capabilities.set(this.keyOf(request), { capabilities, storedAt: this.clock.now().getTime() });
      return { ...response, body: replay(body) };
    }
    if (key === undefined || !this.worthRemembering(request, response)) return response;
    const body = await collect(response.body);
    if (response.statusCode === 200 && !Buffer.from(body).toString('latin1').includes('version 2\n')) {
      // The server fell back to protocol v0/v1: that advertisement lists refs, so it must not be reused.
      return { ...response, body: replay(body) };
    }
    this.remembered.set(key, {
      statusCode: response.statusCode,
      statusMessage: response.statusMessage,
      headers: { ...(response.headers ?? {}) },
      body,
      storedAt: this.clock.now().getTime(),
    });
    return { ...response, body: replay(body) };
  };

  private replayAnswer(request: GitHttpRequest, answer: RememberedAnswer): GitHttpResponse {
    return {
      url: request.url,
      method: 'GET',
      statusCode: answer.statusCode,
      statusMessage: answer.statusMessage,
      headers: { ...answer.headers },
      body: replay(answer.body),
    };
  }

  /** A request for the upload-pack advertisement in protocol v0/v1 (the first request of a fetch). */
  private isV1Advert(request: GitHttpRequest): boolean {
    return (
      (request.method ?? 'GET') === 'GET' &&
      request.url.endsWith(UPLOAD_PACK_ADVERT_SUFFIX) &&
      !header(request.headers, 'git-protocol')?.includes('version=2')
    );
  }

  /** Repository URL plus a digest of the credentials sent (so no map ever holds credentials). */
  private keyOf(request: GitHttpRequest): string {
    const authorization = header(request.headers, 'authorization') ?? '';
    const digest = authorization ? createHash('sha256').update(authorization).digest('hex') : '-';
    return `${repositoryOf(request.url)} ${digest}`;
  }

  private keyFor(request: GitHttpRequest): string | undefined {
    if ((request.method ?? 'GET') !== 'GET') return undefined;
    if (!request.url.endsWith(UPLOAD_PACK_ADVERT_SUFFIX)) return undefined;
    if (!header(request.headers, 'git-protocol')?.includes('version=2')) return undefined;
    return this.keyOf(request);
  }

  private worthRemembering(request: GitHttpRequest, response: GitHttpResponse): boolean {
    if (response.statusCode === 200) {
      return header(response.headers, 'content-type') === 'application/x-git-upload-pack-advertisement';
    }
    // A challenge to a request without credentials: isomorphic-git then asks onAuth and retries.
    return response.statusCode === 401 && header(request.headers, 'authorization') === undefined;
  }
}
