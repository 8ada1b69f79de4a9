// Kubernetes connection: where the kubeconfig comes from (explicit precedence) and the typed API clients.
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  Observable,
  PatchStrategy,
  ServerConfiguration,
  createConfiguration,
  setHeaderMiddleware,
  setHeaderOptions,
  type ApiConstructor,
  type ApiType,
  type HttpLibrary,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { createRequire } from 'node:module';
import { systemClock } from '../clock/clock.ts';
import { impersonating, impersonatingIdentity, type ImpersonatedIdentity } from './impersonation.ts';
import { describeKubeRequest, type KubeRequestObserver } from './kube-request.ts';
import { PlainKubeHttp } from './plain-kube-http.ts';
import { withPlainWrites } from './plain-write-clients.ts';
import { plainObjectReads } from './plain-object-reads.ts';
import type { ObjectReadClients } from './object-read-clients.ts';
import { RequestRateLimiter, type RateLimitSettings } from './request-rate-limit.ts';
import { shareConnections } from './shared-connections.ts';

/**
 * Where a kubeconfig was found, in the order they are tried; `argocd-secret`: built in memory from an Argo
 * CD cluster Secret (src/clusters).
 */
export type KubeConfigSource = 'flag' | 'env' | 'home' | 'in-cluster' | 'argocd-secret';

/** No kubeconfig anywhere: a human must point us at a cluster. */
export class KubeConfigNotFoundError extends Error {
  override readonly name = 'KubeConfigNotFoundError';
  readonly code = 'kube.config_not_found';
  constructor(readonly tried: string[]) {
    super(`no kubeconfig found (tried: ${tried.join(', ')}); pass --kubeconfig FILE or set KUBECONFIG`);
  }
}

/** `--context NAME` (or `kubernetes.context`) names a context the kubeconfig does not hold. */
export class KubeContextNotFoundError extends Error {
  override readonly name = 'KubeContextNotFoundError';
  readonly code = 'kube.context_not_found';
  constructor(
    readonly context: string,
    readonly known: string[],
    readonly origin: string,
  ) {
    super(
      `context "${context}" not found in kubeconfig ${origin} (contexts: ${known.length === 0 ? 'none' : known.join(', ')})`,
    );
  }
}

/**
 * Makes `context` the kubeconfig's current one, as kubectl's `--context` does for one call: the cluster,
 * user and namespace all come from it. A name the kubeconfig does not hold is refused, never ignored.
 */
export function useContext(kubeConfig: KubeConfig, context: string, origin: string): void {
  const known = kubeConfig.getContexts().map((c) => c.name);
  if (!known.includes(context)) throw new KubeContextNotFoundError(context, known, origin);
  kubeConfig.setCurrentContext(context);
}

/** A kubeconfig that was named explicitly (flag or KUBECONFIG) but does not exist. */
export class KubeConfigMissingFileError extends Error {
  override readonly name = 'KubeConfigMissingFileError';
  readonly code = 'kube.config_missing_file';
  constructor(
    readonly file: string,
    readonly source: KubeConfigSource,
  ) {
    super(`kubeconfig ${file} (from ${source === 'flag' ? '--kubeconfig' : 'KUBECONFIG'}) does not exist`);
  }
}

/** Inputs of the lookup; every field defaults to the real process environment (tests inject their own). */
export interface KubeConfigLookup {
  /** `--kubeconfig FILE`: wins over everything else. */
  kubeconfig?: string | undefined;
  env?: NodeJS.ProcessEnv;
  homeDir?: string;
  /** Prefix for the service-account files (`/var/run/secrets/kubernetes.io/serviceaccount`); tests only. */
  inClusterRoot?: string;
  fileExists?: (path: string) => boolean;
}

/** The result of the lookup: a loaded config and where it came from (worth logging once at start). */
export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  source: KubeConfigSource;
  /** The file(s) read, or the API server address for in-cluster. */
  origin: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads a kubeconfig with the precedence kubectl users expect:
 * `--kubeconfig` → `KUBECONFIG` (first file wins for the current context, others merged) →
 * `~/.kube/config` → in-cluster service account (KUBERNETES_SERVICE_HOST + token file).
 */
export function loadKubeConfig(lookup: KubeConfigLookup = {}): LoadedKubeConfig {
  const env = lookup.env ?? process.env;
  const exists = lookup.fileExists ?? existsSync;
  const tried: string[] = [];

  if (lookup.kubeconfig !== undefined && lookup.kubeconfig !== '') {
    if (!exists(lookup.kubeconfig)) throw new KubeConfigMissingFileError(lookup.kubeconfig, 'flag');
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(lookup.kubeconfig);
    return { kubeConfig, source: 'flag', origin: lookup.kubeconfig };
  }
  tried.push('--kubeconfig');

  const envFiles = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file !== '');
  if (envFiles.length > 0) {
    const present = envFiles.filter((file) => exists(file));
    if (present.length === 0) throw new KubeConfigMissingFileError(envFiles.join(delimiter), 'env');
    const kubeConfig = new KubeConfig();
    const [first, ...rest] = present as [string, ...string[]];
    kubeConfig.loadFromFile(first);
    for (const file of rest) {
      const other = new KubeConfig();
      other.loadFromFile(file);
      mergeFirstWins(kubeConfig, other);
    }
    return { kubeConfig, source: 'env', origin: present.join(delimiter) };
  }
  tried.push('KUBECONFIG');

  const home = lookup.homeDir ?? env.HOME ?? homedir();
  const homeConfig = join(home, '.kube', 'config');
  if (exists(homeConfig)) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(homeConfig);
    return { kubeConfig, source: 'home', origin: homeConfig };
  }
  tried.push(homeConfig);

  const root = lookup.inClusterRoot ?? '';
  const host = env.KUBERNETES_SERVICE_HOST;
  if (host !== undefined && host !== '' && exists(`${root}${SERVICE_ACCOUNT_TOKEN}`)) {
    const kubeConfig = inClusterConfig(host, env.KUBERNETES_SERVICE_PORT ?? '443', root, exists);
    return { kubeConfig, source: 'in-cluster', origin: kubeConfig.getCurrentCluster()?.server ?? host };
  }
  tried.push('in-cluster service account');
  throw new KubeConfigNotFoundError(tried);
}

/** kubectl's KUBECONFIG merge rule: the first file to define a cluster, user or context wins. */
function mergeFirstWins(target: KubeConfig, other: KubeConfig): void {
  const clusters = new Set(target.getClusters().map((c) => c.name));
  const users = new Set(target.getUsers().map((u) => u.name));
  const contexts = new Set(target.getContexts().map((c) => c.name));
  for (const cluster of other.getClusters()) if (!clusters.has(cluster.name)) target.addCluster(cluster);
  for (const user of other.getUsers()) if (!users.has(user.name)) target.addUser(user);
  for (const context of other.getContexts()) if (!contexts.has(context.name)) target.addContext(context);
}

/** The service-account config client-node's loadFromCluster builds, but from the env we were given. */
function inClusterConfig(
  host: string,
  port: string,
  root: string,
  exists: (path: string) => boolean,
): KubeConfig {
  const dir = `${root}/var/run/secrets/kubernetes.io/serviceaccount`;
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const namespace = exists(`${dir}/namespace`) ? readFileSync(`${dir}/namespace`, 'utf8').trim() : undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'inCluster', server, caFile: `${dir}/ca.crt`, skipTLSVerify: false }],
    users: [
      { name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: `${dir}/token` } } },
    ],
    contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }],
    currentContext: 'inClusterContext',
  });
  return kubeConfig;
}

/** The typed API clients Rollgate uses, all made from one KubeConfig. */
export interface KubeClients {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  events: EventsV1Api;
  custom: CustomObjectsApi;
  apiextensions: ApiextensionsV1Api;
  /**
   * The reads of a rollout's world sent plainly as its writes are (plain-object-reads.ts), where the
   * clients send as Rollgate itself over a simple kubeconfig; absent (impersonating clients, `plainWrites`
   * off, a test's own clients): the typed clients above read. Readers take them through objectReadsOf.
   */
  reads?: ObjectReadClients | undefined;
}

/** What a rollout's world is read with: the plain reads where the clients have them, else the typed clients. */
export function objectReadsOf(clients: KubeClients): ObjectReadClients {
  return clients.reads ?? clients;
}

/** How the typed clients send their requests. */
export interface KubeClientOptions {
  /** The process's client-side limit (client-go's QPS and burst), shared by every client; none: no limit. */
  rateLimit?: RateLimitSettings | undefined;
  /**
   * Send the reconciler's per-pass writes over plain HTTP when the kubeconfig's current context is simple
   * (plain-write-clients.ts); default true. False keeps every call on client-node (the benches' comparison).
   */
  plainWrites?: boolean | undefined;
}

/** client-node's own User-Agent (the sandbox and real API servers name a write's manager after it). */
const CLIENT_USER_AGENT = `kubernetes-client-javascript/${
  (createRequire(import.meta.url)('@kubernetes/client-node/package.json') as { version: string }).version
}`;

/**
 * The HTTP library of the typed clients, telling `observer()` of each request's verb, resource, status and
 * duration. Wrapping the library (not a middleware) sees the request and its answer together, also when no
 * answer comes.
 */
function observedHttpLibrary(observers: ReadonlySet<KubeRequestObserver>): HttpLibrary {
  const inner = new IsomorphicFetchHttpLibrary();
  return {
    send(request: RequestContext): Observable<ResponseContext> {
      if (observers.size === 0) return inner.send(request);
      const started = performance.now();
      const { verb, resource } = describeKubeRequest(request.getHttpMethod().toString(), request.getUrl());
      const tell = (code: string): void => {
        const observation = { verb, resource, code, seconds: (performance.now() - started) / 1_000 };
        for (const observer of observers)
          try {
            observer(observation);
          } catch {
            // Counting must never fail a request.
          }
      };
      return new Observable(
        inner
          .send(request)
          .toPromise()
          .then(
            (response) => {
              tell(String(response.httpStatusCode));
              return response;
            },
            (err: unknown) => {
              tell('error');
              throw err;
            },
          ),
      );
    },
  };
}

/**
 * The kubeconfig as the typed clients' authentication, each request first taking a token from the rate
 * limiter and each one counted by the connection's observer. Connections are pooled by shareConnections on
 * `kubeConfig` itself (per server and TLS material, so rotated certificates get a new pool), which also
 * covers clients made from it directly.
 */
function rateLimitedAuthentication(kubeConfig: KubeConfig, connection: SharedConnection): KubeConfig {
  shareConnections(kubeConfig);
  // Everything else (the current cluster, contexts) is read through to `kubeConfig`, also after a
  // later setCurrentContext.
  const authenticating = Object.create(kubeConfig) as KubeConfig;
  authenticating.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await connection.limiter?.take();
    await kubeConfig.applySecurityAuthentication(context);
  };
  const httpApi = observedHttpLibrary(connection.observers);
  // As client-node's own makeApiClient, with the observed library; `this` is the config the client is
  // made from (an impersonating one inherits this method and must authenticate as itself).
  authenticating.makeApiClient = function makeApiClient<T extends ApiType>(
    this: KubeConfig,
    type: ApiConstructor<T>,
  ): T {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    return new type(
      createConfiguration({
        baseServer: new ServerConfiguration(cluster.server, {}),
        authMethods: { default: this },
        middleware: [setHeaderMiddleware('User-Agent', CLIENT_USER_AGENT)],
        httpApi,
      }),
    );
  };
  return authenticating;
}

/** Per kubeconfig: the pooled view every client made from it shares, its rate limit and its observers. */
interface SharedConnection {
  authenticating: KubeConfig;
  limiter: RequestRateLimiter | undefined;
  observers: Set<KubeRequestObserver>;
  /** The same connection's plain sender (its own keep-alive pool, the same limiter and observers). */
  plain: PlainKubeHttp;
}

const shared = new WeakMap<KubeConfig, SharedConnection>();

function sharedConnection(kubeConfig: KubeConfig): SharedConnection {
  let connection = shared.get(kubeConfig);
  if (connection === undefined) {
    const made = { limiter: undefined, observers: new Set(), authenticating: kubeConfig } as Omit<
      SharedConnection,
      'plain'
    > as SharedConnection;
    made.authenticating = rateLimitedAuthentication(kubeConfig, made);
    made.plain = new PlainKubeHttp(kubeConfig, made, { userAgent: CLIENT_USER_AGENT });
    shared.set(kubeConfig, made);
    connection = made;
  }
  return connection;
}

/**
 * Tells `observer` of every request the clients made from `kubeConfig` send (those made before too), for
 * the API client metrics (docs/metrics.md), until the returned function is called. Watches are long-lived
 * streams, not requests, and are not counted.
 */
export function observeKubeRequests(kubeConfig: KubeConfig, observer: KubeRequestObserver): () => void {
  const { observers } = sharedConnection(kubeConfig);
  observers.add(observer);
  return () => observers.delete(observer);
}

/**
 * An API client of any client-node type (the sync's object API, discovery, /version) on the same pool
 * and rate limit as {@link createKubeClients}' clients: use it instead of `kubeConfig.makeApiClient`.
 * With `options.impersonate`, every request it sends acts as that user (see impersonation.ts).
 */
export function makePooledApiClient<T extends ApiType>(
  kubeConfig: KubeConfig,
  type: ApiConstructor<T>,
  options: { impersonate?: string | undefined } = {},
): T {
  const { authenticating } = sharedConnection(kubeConfig);
  const sender =
    options.impersonate === undefined ? authenticating : impersonating(authenticating, options.impersonate);
  return sender.makeApiClient(type);
}

/**
 * Every client of {@link createKubeClients}, on the same pool and rate limit, sending each request as
 * `identity` (a person signed in to the dashboard; see impersonatingIdentity).
 */
export function createImpersonatingKubeClients(
  kubeConfig: KubeConfig,
  identity: ImpersonatedIdentity,
): KubeClients {
  const acting = impersonatingIdentity(sharedConnection(kubeConfig).authenticating, identity);
  return {
    kubeConfig,
    core: acting.makeApiClient(CoreV1Api),
    apps: acting.makeApiClient(AppsV1Api),
    batch: acting.makeApiClient(BatchV1Api),
    events: acting.makeApiClient(EventsV1Api),
    custom: acting.makeApiClient(CustomObjectsApi),
    apiextensions: acting.makeApiClient(ApiextensionsV1Api),
  };
}

/** Builds every client from one config (cheap: no request is made). */
export function createKubeClients(kubeConfig: KubeConfig, options: KubeClientOptions = {}): KubeClients {
  const connection = sharedConnection(kubeConfig);
  if (options.rateLimit !== undefined && options.rateLimit.qps > 0)
    connection.limiter = new RequestRateLimiter(options.rateLimit, systemClock);
  const { authenticating } = connection;
  const clients: KubeClients = {
    kubeConfig,
    core: authenticating.makeApiClient(CoreV1Api),
    apps: authenticating.makeApiClient(AppsV1Api),
    batch: authenticating.makeApiClient(BatchV1Api),
    events: authenticating.makeApiClient(EventsV1Api),
    custom: authenticating.makeApiClient(CustomObjectsApi),
    apiextensions: authenticating.makeApiClient(ApiextensionsV1Api),
  };
  if (options.plainWrites === false) return clients;
  const writing = withPlainWrites(clients, connection.plain, PATCH_CONTENT_TYPES);
  return { ...writing, reads: plainObjectReads(writing, connection.plain) };
}

/** The namespace of the current context, or `default`: what `-n` falls back to, as with kubectl. */
export function currentNamespace(kubeConfig: KubeConfig): string {
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace ?? 'default';
}

/** Request options that send a body as an RFC 7386 merge patch (client-node otherwise picks JSON patch). */
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Request options that send a body as a server-side apply patch. */
export const APPLY_PATCH = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

/** The patch options the plain writes recognise, by identity (any other option goes to client-node). */
const PATCH_CONTENT_TYPES = new Map([
  [MERGE_PATCH, PatchStrategy.MergePatch as string],
  [APPLY_PATCH, PatchStrategy.ServerSideApply as string],
]);

// The field managers live apart from client-node (the rollout verbs' plain client sends them too).
export { FIELD_MANAGER, VERB_FIELD_MANAGER } from './field-managers.ts';

// Apart from client-node: the CLI's plain-JSON reads use it too.
export { toPlainObject } from './plain-object.ts';

/** A ready connection for a command: clients, the default namespace, and where the config came from. */
export interface KubeConnection {
  clients: KubeClients;
  namespace: string;
  source: KubeConfigSource;
  origin: string;
}

/**
 * Loads the kubeconfig (see {@link loadKubeConfig}), switches to `context` when named, and builds the
 * clients; `namespace` wins over the context's.
 */
export function connectKube(
  options: {
    kubeconfig?: string | undefined;
    context?: string | undefined;
    namespace?: string | undefined;
    rateLimit?: RateLimitSettings | undefined;
  } = {},
): KubeConnection {
  const loaded = loadKubeConfig({ kubeconfig: options.kubeconfig });
  if (options.context !== undefined && options.context !== '')
    useContext(loaded.kubeConfig, options.context, loaded.origin);
  return {
    clients: createKubeClients(loaded.kubeConfig, { rateLimit: options.rateLimit }),
    namespace: options.namespace ?? currentNamespace(loaded.kubeConfig),
    source: loaded.source,
    origin: loaded.origin,
  };
}
