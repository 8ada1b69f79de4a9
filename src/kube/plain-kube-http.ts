// Requests to the API server over node:http(s) with a keep-alive pool and JSON.parse of the answer, for a
// KubeConfig whose current cluster and user are simple: client-node's request objects, ObjectSerializer,
// undici fetch and web streams cost more CPU than the reconciler's small writes themselves.
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { describeKubeRequest, type KubeRequestObserver } from './kube-request.ts';
import type { RequestRateLimiter } from './request-rate-limit.ts';

/** Where to send and how to authenticate: what client-node would derive from the same cluster and user. */
export interface PlainKubeTarget {
  /** The cluster's `server` without a trailing slash: request paths are appended to it. */
  server: string;
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  skipTlsVerify: boolean;
  tlsServerName?: string | undefined;
  /** The `Authorization` header value: a secret, never logged nor put in an error. */
  authorization?: string | undefined;
}

/**
 * The target of `cluster` and `user`, or undefined whenever client-node must send instead: no cluster or
 * user, a proxy, an exec plugin or auth provider (tokens that change: client-node runs them per request),
 * material in files (client-node re-reads them per request, so a rotated certificate is picked up),
 * `as:` impersonation in the kubeconfig, or plain http without insecure-skip-tls-verify (client-node's
 * error to give).
 */
export function plainKubeTargetOf(cluster: Cluster | null, user: User | null): PlainKubeTarget | undefined {
  if (cluster === null || user === null) return undefined;
  if (cluster.proxyUrl || cluster.caFile) return undefined;
  if (user.exec || user.authProvider || user.certFile || user.keyFile || user.impersonateUser != null)
    return undefined;
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    return undefined;
  }
  const skipTlsVerify = cluster.skipTLSVerify === true;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && skipTlsVerify)) return undefined;
  // As client-node: a password first, a token over it.
  let authorization: string | undefined;
  if (user.username)
    authorization = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  if (user.token) authorization = `Bearer ${user.token}`;
  return {
    server: cluster.server.replace(/\/+$/, ''),
    ca: cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined,
    cert: user.certData ? Buffer.from(user.certData, 'base64') : undefined,
    key: user.keyData ? Buffer.from(user.keyData, 'base64') : undefined,
    skipTlsVerify,
    tlsServerName: cluster.tlsServerName || undefined,
    authorization,
  };
}

/**
 * An unsuccessful answer, shaped as client-node's ApiException (a numeric `code`, `body`, `headers`), so
 * errors.ts maps it to the same typed error with the same message. The request's headers (its
 * credentials) are never part of it.
 */
export class KubeHttpStatusError extends Error {
  override readonly name = 'KubeHttpStatusError';
  constructor(
    readonly code: number,
    readonly body: string | undefined,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP-Code: ${code}`);
  }
}

/** One request: the path is appended to the server (query included), the body sent as JSON. */
export interface PlainKubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  path: string;
  body?: unknown;
  /** The body's Content-Type (default `application/json`). */
  contentType?: string | undefined;
  /** Extra header lines (impersonation); an array value is sent as one line per element. */
  headers?: Readonly<Record<string, string | readonly string[]>> | undefined;
}

/** What a request shares with client-node's clients of the same kubeconfig (client.ts's SharedConnection). */
export interface PlainKubeConnection {
  readonly limiter: RequestRateLimiter | undefined;
  readonly observers: ReadonlySet<KubeRequestObserver>;
}

export interface PlainKubeHttpOptions {
  userAgent: string;
  /**
   * A request with no byte sent or received for this long fails as a transient ETIMEDOUT: undici's
   * headers and body timeouts (300 s), which client-node's fetch runs with.
   */
  idleTimeoutMs?: number;
}

/** Idle pooled sockets close after this, under the API server's keep-alive (Go's 90 s, Node's 5 s). */
const FREE_SOCKET_TIMEOUT_MS = 4_000;
const IDLE_TIMEOUT_MS = 300_000;

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

interface Resolved {
  cluster: Cluster;
  user: User;
  target: PlainKubeTarget;
  agent: HttpAgent;
}

/** A target with the pool its requests share. */
export type PlainKubeRoute = Resolved;

/**
 * The sender of one KubeConfig. `route()` says whether the kubeconfig's current context (read on every
 * call, so a later setCurrentContext is followed) can be sent plainly; `send()` sends on its pool, first
 * taking a token from the shared rate limiter and telling the shared observers, as client-node's path
 * does (client.ts). Redirects are never followed: a 3xx is an error like any other status.
 */
export class PlainKubeHttp {
  private resolved: Resolved | undefined;
  private notSimple: { cluster: Cluster | null; user: User | null } | undefined;
  private readonly idleTimeoutMs: number;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly connection: PlainKubeConnection,
    private readonly options: PlainKubeHttpOptions,
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  }

  /** The route of the current context, or undefined when client-node must send (see plainKubeTargetOf). */
  route(): PlainKubeRoute | undefined {
    // Authenticators added to the config (addAuthenticator) are client-node's to run.
    const custom = (this.kubeConfig as unknown as { custom_authenticators?: unknown[] })
      .custom_authenticators;
    if (custom !== undefined && custom.length > 0) return undefined;
    const cluster = this.kubeConfig.getCurrentCluster();
    const user = this.kubeConfig.getCurrentUser();
    const known = this.resolved;
    if (known !== undefined && known.cluster === cluster && known.user === user) return known;
    if (this.notSimple?.cluster === cluster && this.notSimple.user === user) return undefined;
    const target = plainKubeTargetOf(cluster, user);
    if (target === undefined || cluster === null || user === null) {
      this.notSimple = { cluster, user };
      return undefined;
    }
    // The previous pool's idle sockets close on their own (FREE_SOCKET_TIMEOUT_MS); requests on it finish.
    this.resolved = { cluster, user, target, agent: agentFor(target) };
    return this.resolved;
  }

  /** Sends `request`; resolves with the parsed JSON of a 2xx answer, rejects as client-node would. */
  async send(route: PlainKubeRoute, request: PlainKubeRequest): Promise<unknown> {
    await this.connection.limiter?.take();
    const { target, agent } = route;
    const url = target.server + request.path;
    const headers: OutgoingHttpHeaders = {
      Accept: 'application/json, */*;q=0.8',
      'User-Agent': this.options.userAgent,
    };
    if (target.authorization !== undefined) headers.Authorization = target.authorization;
    const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (payload !== undefined) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    if (request.headers !== undefined)
      for (const [name, value] of Object.entries(request.headers))
        headers[name] = typeof value === 'string' ? value : [...value];
    const observers = this.connection.observers;
    const started = observers.size === 0 ? 0 : performance.now();
    const tell = (code: string): void => {
      if (observers.size === 0) return;
      const { verb, resource } = describeKubeRequest(request.method, url);
      const observation = { verb, resource, code, seconds: (performance.now() - started) / 1_000 };
      for (const observer of observers)
        try {
          observer(observation);
        } catch {
          // Counting must never fail a request.
        }
    };
    return new Promise((resolve, reject) => {
      let settled = false;
      // A failure with no answer is told as client-node's fetch tells it: its cause carries the code.
      const failed = (err: Error): void => {
        if (settled) return;
        settled = true;
        tell('error');
        reject(new TypeError('fetch failed', { cause: err }));
      };
      const options = { method: request.method, headers, agent };
      const sent = url.startsWith('https:') ? httpsRequest(url, options) : httpRequest(url, options);
      sent.setTimeout(this.idleTimeoutMs, () => {
        const timeout = Object.assign(new Error(`no answer for ${this.idleTimeoutMs} ms`), {
          code: 'ETIMEDOUT',
        });
        sent.destroy(timeout);
      });
      sent.on('error', failed);
      sent.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', failed);
        response.on('end', () => {
          if (settled) return;
          settled = true;
          const status = response.statusCode ?? 0;
          tell(String(status));
          const text =
            chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
          if (status >= 200 && status <= 299) {
            try {
              resolve(JSON.parse(text));
            } catch (err) {
              reject(err as Error);
            }
            return;
          }
          // client-node keeps no body with a 401.
          reject(
            new KubeHttpStatusError(status, status === 401 ? undefined : text, flatHeaders(response.headers)),
          );
        });
      });
      sent.end(payload);
    });
  }
}

/** One keep-alive pool per target, with the TLS settings client-node would give its dispatcher. */
function agentFor(target: PlainKubeTarget): HttpAgent {
  const pool = {
    keepAlive: true,
    keepAliveMsecs: 30_000,
    timeout: FREE_SOCKET_TIMEOUT_MS,
    scheduling: 'lifo' as const,
  };
  if (!target.server.startsWith('https:')) return new HttpAgent(pool);
  return new HttpsAgent({
    ...pool,
    ca: target.ca,
    cert: target.cert,
    key: target.key,
    // Unset unless the kubeconfig turns verification off, so NODE_TLS_REJECT_UNAUTHORIZED still applies.
    ...(target.skipTlsVerify ? { rejectUnauthorized: false } : {}),
    servername: target.tlsServerName,
  });
}
