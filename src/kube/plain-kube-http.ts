// Requests to the API server over node:http(s) with a keep-alive pool and JSON.parse of the answer, for a
// KubeConfig whose current cluster and user are simple: client-node's request objects, ObjectSerializer,
// undici fetch and web streams cost more CPU than the reconciler's small writes themselves, and loading
// client-node is most of a short CLI command's start-up (custom-object-client.ts sends through this too).
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http';
import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { describeKubeRequest, type KubeRequestObserver } from './kube-request.ts';
import type { RequestRateLimiter } from './request-rate-limit.ts';

/** Where to send and how to authenticate: what client-node would derive from the same cluster and user. */
export interface PlainKubeTarget {
  /** The cluster's `server`, without a trailing slash: request paths are appended to it. */
  server: string;
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  /** `insecure-skip-tls-verify` */
  skipTlsVerify: boolean;
  tlsServerName?: string | undefined;
  /** The `Authorization` header, when the user has a token or a password: a secret, in no log or error. */
  authorization?: string | undefined;
}

/**
 * Where the current cluster and user come from: a KubeConfig, or the CLI's simple kubeconfig
 * (simple-kubeconfig.ts), which must not load client-node.
 */
export type CurrentContext = Pick<KubeConfig, 'getCurrentCluster' | 'getCurrentUser'>;

/** How a target's files are read (tests inject their own). */
export type ReadMaterial = (path: string) => Buffer;

/** A target and whether it was read from files (which are read again from time to time). */
export interface ReadTarget {
  target: PlainKubeTarget;
  fromFiles: boolean;
}

/** Rollgate's in-cluster user (client.ts): its token read from the service account's file. */
function tokenFileOf(user: User): string | undefined | false {
  const provider = user.authProvider as { name?: unknown; config?: Record<string, unknown> } | undefined;
  if (provider === undefined || provider === null) return undefined;
  const config = provider.config ?? {};
  const keys = Object.keys(config);
  if (provider.name !== 'tokenFile' || keys.length !== 1 || typeof config.tokenFile !== 'string')
    return false;
  return config.tokenFile;
}

/**
 * The target of `cluster` and `user`, or undefined whenever client-node must send instead: no cluster or
 * user, a proxy, an exec plugin or an auth provider other than Rollgate's in-cluster token file (OIDC,
 * cloud providers: client-node runs them), `as:` impersonation in the kubeconfig, plain http without
 * insecure-skip-tls-verify (client-node's error to give), or a file that cannot be read (client-node's
 * error too). Files are read as client-node reads them: a path for the CA, certificate or key wins over
 * inline data; a token wins over a password and over the token file.
 */
export function plainKubeTargetOf(
  cluster: Cluster | null,
  user: User | null,
  readMaterial: ReadMaterial = readFileSync,
): ReadTarget | undefined {
  if (cluster === null || user === null) return undefined;
  if (cluster.proxyUrl || user.exec || user.impersonateUser != null) return undefined;
  const tokenFile = tokenFileOf(user);
  if (tokenFile === false) return undefined;
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    return undefined;
  }
  const skipTlsVerify = cluster.skipTLSVerify === true;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && skipTlsVerify)) return undefined;
  const material = (file: string | undefined, data: string | undefined): Buffer | undefined =>
    file ? readMaterial(file) : data ? Buffer.from(data, 'base64') : undefined;
  let ca: Buffer | undefined;
  let cert: Buffer | undefined;
  let key: Buffer | undefined;
  let fileToken: string | undefined;
  try {
    ca = material(cluster.caFile, cluster.caData);
    cert = material(user.certFile, user.certData);
    key = material(user.keyFile, user.keyData);
    fileToken = tokenFile === undefined ? undefined : readMaterial(tokenFile).toString('utf8');
  } catch {
    return undefined;
  }
  // As client-node: a password first, the token file over it, a token over both.
  let authorization: string | undefined;
  if (user.username)
    authorization = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  if (fileToken) authorization = `Bearer ${fileToken}`;
  if (user.token) authorization = `Bearer ${user.token}`;
  return {
    target: {
      server: cluster.server.replace(/\/+$/, ''),
      ca,
      cert,
      key,
      skipTlsVerify,
      tlsServerName: cluster.tlsServerName || undefined,
      authorization,
    },
    fromFiles: Boolean(cluster.caFile || user.certFile || user.keyFile || tokenFile),
  };
}

/** True when `a` and `b` would send the same way on the same pool. */
function sameTarget(a: PlainKubeTarget, b: PlainKubeTarget): boolean {
  const same = (x: Buffer | undefined, y: Buffer | undefined): boolean =>
    x === undefined || y === undefined ? x === y : x.equals(y);
  return (
    a.server === b.server &&
    a.skipTlsVerify === b.skipTlsVerify &&
    a.tlsServerName === b.tlsServerName &&
    a.authorization === b.authorization &&
    same(a.ca, b.ca) &&
    same(a.cert, b.cert) &&
    same(a.key, b.key)
  );
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
  /** Milliseconds on a monotonic clock, for when files are read again (tests inject their own). */
  now?: () => number;
  readMaterial?: ReadMaterial;
}

/**
 * How long a target read from files is used before they are read again: client-node reads them on every
 * request (a rotated certificate, the kubelet's rotated service account token); a second's delay costs a
 * few small reads a second instead of a few per request.
 */
export const MATERIAL_RECHECK_MS = 1_000;

/** Idle pooled sockets close after this, under the API server's keep-alive (Go's 90 s, Node's 5 s). */
const FREE_SOCKET_TIMEOUT_MS = 4_000;
const IDLE_TIMEOUT_MS = 300_000;
/** Kept-alive connections found closed before a request gets an answer on a fresh one. */
const STALE_SOCKET_RETRIES = 2;

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
  /** When files must be read again (never for a target without files). */
  recheckAt: number;
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
  private readonly now: () => number;

  constructor(
    private readonly kubeConfig: CurrentContext,
    private readonly connection: PlainKubeConnection,
    private readonly options: PlainKubeHttpOptions,
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
    // process.hrtime, not performance.now(): on Node 20 the first read of the global `performance` loads
    // node:perf_hooks, a few ms of a short command's start.
    this.now = options.now ?? (() => Number(process.hrtime.bigint()) / 1e6);
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
    const now = this.now();
    if (known !== undefined && known.cluster === cluster && known.user === user && now < known.recheckAt)
      return known;
    if (known === undefined && this.notSimple?.cluster === cluster && this.notSimple.user === user)
      return undefined;
    const read = plainKubeTargetOf(cluster, user, this.options.readMaterial);
    if (read === undefined || cluster === null || user === null) {
      // A file that cannot be read now is client-node's error to give; it is tried again next time.
      this.resolved = undefined;
      this.notSimple = read === undefined && !readsFiles(cluster, user) ? { cluster, user } : undefined;
      return undefined;
    }
    const recheckAt = read.fromFiles ? now + MATERIAL_RECHECK_MS : Number.POSITIVE_INFINITY;
    // The same material keeps its pool; new material (rotated) gets a new one, and the old pool's idle
    // sockets close on their own (FREE_SOCKET_TIMEOUT_MS) once its requests finish.
    const agent =
      known !== undefined && sameTarget(known.target, read.target) ? known.agent : agentFor(read.target);
    this.resolved = { cluster, user, target: read.target, agent, recheckAt };
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
    const options = { method: request.method, headers, agent };
    return new Promise((resolve, reject) => {
      let settled = false;
      // Told once, at the answer's headers as client-node's fetch resolves (the duration metric's end).
      let told = false;
      const attempt = (staleRetries: number): void => {
        const sent = url.startsWith('https:') ? httpsRequest(url, options) : httpRequest(url, options);
        // A failure with no answer is told as client-node's fetch tells it: its cause carries the code.
        const failed = (err: Error): void => {
          if (settled) return;
          // A kept-alive connection the server closed while idle (its keep-alive timeout, a load
          // balancer's) fails the request written on it before any answer: sent again on another, as
          // Node's documentation advises. Every write the reconciler sends is conditional (a create, a
          // resourceVersion) or harmless twice (an Event's count), should the server have seen it; the
          // CLI's verbs send merge patches of absolute values, a step's with its resourceVersion.
          const code = (err as { code?: unknown }).code;
          if (!told && sent.reusedSocket && staleRetries > 0 && (code === 'ECONNRESET' || code === 'EPIPE')) {
            attempt(staleRetries - 1);
            return;
          }
          settled = true;
          if (!told) tell('error');
          reject(new TypeError('fetch failed', { cause: err }));
        };
        sent.setTimeout(this.idleTimeoutMs, () => {
          const timeout = Object.assign(new Error(`no answer for ${this.idleTimeoutMs} ms`), {
            code: 'ETIMEDOUT',
          });
          sent.destroy(timeout);
        });
        sent.on('error', failed);
        sent.on('response', (response) => {
          told = true;
          tell(String(response.statusCode ?? 0));
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', failed);
          response.on('end', () => {
            if (settled) return;
            settled = true;
            const status = response.statusCode ?? 0;
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
              new KubeHttpStatusError(
                status,
                status === 401 ? undefined : text,
                flatHeaders(response.headers),
              ),
            );
          });
        });
        sent.end(payload);
      };
      attempt(STALE_SOCKET_RETRIES);
    });
  }

  /** Closes the current pool's connections: a short command then exits at once, not when they time out. */
  close(): void {
    this.resolved?.agent.destroy();
  }
}

/** True when the cluster or user names a file: a failure to read it may pass. */
function readsFiles(cluster: Cluster | null, user: User | null): boolean {
  const provider = user?.authProvider as { config?: { tokenFile?: unknown } } | undefined;
  return Boolean(cluster?.caFile || user?.certFile || user?.keyFile || provider?.config?.tokenFile);
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
