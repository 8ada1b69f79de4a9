// The HTTP client handed to isomorphic-git: counts requests and remembers protocol v2 capability adverts.
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
  private sent = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly inner: HttpClient = nodeHttp,
    private readonly idleTimeoutMs: number = DEFAULT_IDLE_TIMEOUT_MS,
  ) {}

  /** Requests that went over the network (answers from memory are not counted). */
  get requestCount(): number {
    return this.sent;
  }

  /** Forgets every remembered advertisement. */
  forget(repositoryUrl?: string): void {
    if (repositoryUrl === undefined) {
      this.remembered.clear();
      return;
    }
    const prefix = `${repositoryOf(repositoryUrl)} `;
    for (const key of this.remembered.keys()) if (key.startsWith(prefix)) this.remembered.delete(key);
  }

  request = async (request: GitHttpRequest): Promise<GitHttpResponse> => {
    const key = this.keyFor(request);
    if (key !== undefined) {
      const hit = this.remembered.get(key);
      if (hit && this.clock.now().getTime() - hit.storedAt < CAPABILITIES_TTL_MS) {
        return {
          url: request.url,
          method: 'GET',
          statusCode: hit.statusCode,
          statusMessage: hit.statusMessage,
          headers: { ...hit.headers },
          body: replay(hit.body),
        };
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

  private keyFor(request: GitHttpRequest): string | undefined {
    if ((request.method ?? 'GET') !== 'GET') return undefined;
    if (!request.url.endsWith('/info/refs?service=git-upload-pack')) return undefined;
    if (!header(request.headers, 'git-protocol')?.includes('version=2')) return undefined;
    const authorization = header(request.headers, 'authorization') ?? '';
    // Credentials are part of the key only as a digest, so the map never holds them.
    const digest = authorization ? createHash('sha256').update(authorization).digest('hex') : '-';
    return `${repositoryOf(request.url)} ${digest}`;
  }

  private worthRemembering(request: GitHttpRequest, response: GitHttpResponse): boolean {
    if (response.statusCode === 200) {
      return header(response.headers, 'content-type') === 'application/x-git-upload-pack-advertisement';
    }
    // A challenge to a request without credentials: isomorphic-git then asks onAuth and retries.
    return response.statusCode === 401 && header(request.headers, 'authorization') === undefined;
  }
}
