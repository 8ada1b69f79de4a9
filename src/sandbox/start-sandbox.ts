// Starts a sandbox cluster in-process: store + API server + controllers, and the handle tests drive it with.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { ManualClock, systemClock, type Clock } from '../clock/clock.ts';
import { WriteAudit } from './audit/write-audit.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { ControllerLoop } from './controller-loop/controller-loop.ts';
import { defaultControllerOptions } from './controllers/index.ts';
import type { FaultSettings } from './faults/fault-settings.ts';
import { noFaults } from './faults/fault-settings.ts';
import { SeededRandom } from './random/seeded-random.ts';
import { ResourceRegistry } from './resources/resource-registry.ts';
import { ApiServer } from './server/api-server.ts';
import { sandboxPatchEngines } from './server/patch-engines.ts';
import { ObjectStore, type StoreEvent } from './store/object-store.ts';
import { sandboxKubeConfig, sandboxKubeconfigYaml } from './sandbox-kubeconfig.ts';
import { storeBootstrapPolicy } from './rbac/bootstrap-policy.ts';
import { RbacAuthorizer } from './rbac/rbac-authorizer.ts';
import { ServiceAccountTokens } from './rbac/service-account-tokens.ts';

export interface SandboxOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Bind address; loopback by default. */
  host?: string;
  /** Seed for generated names, uids and injected faults (default 1). */
  seed?: number;
  /** Initial fault settings (all off by default); mutate `sandbox.faults` to change them later. */
  faults?: Partial<FaultSettings>;
  /** Time source for timestamps and controllers; a ManualClock makes everything deterministic. */
  clock?: Clock;
  /** Image globs the simulated registry lacks (pulls fail with ErrImagePull / ImagePullBackOff). */
  missingImages?: string[];
  /** How long a healthy pod takes to become Ready (default 1000 ms). */
  readyDelayMs?: number;
  /**
   * When set, every request must carry `Authorization: Bearer <token>` (or a ServiceAccount's token). It
   * is the admin's: requests made with it are never refused by RBAC.
   */
  token?: string;
  /**
   * RBAC mode (off by default): requests with a ServiceAccount token are authorized against the stored
   * Roles, ClusterRoles and bindings, as kube-apiserver's `--authorization-mode=RBAC` does. The admin
   * bypasses it: the `token` holder, or, without `token`, a request carrying no credentials at all, as on
   * kube-apiserver's old insecure port (kubectl sends no credentials over plain HTTP, so that is how the
   * real kubectl reaches the sandbox).
   */
  rbac?: boolean;
  /** Watch events kept for resume (older resourceVersions get 410 Gone). Default 10000. */
  historyLimit?: number;
  /** Interval between watch BOOKMARK events when a client allows them (real time, default 10 s). */
  bookmarkIntervalMs?: number;
  logger?: Logger;
}

/** A running sandbox. */
export interface Sandbox {
  url: string;
  /** A client-node KubeConfig pointing at this sandbox. */
  kubeConfig: KubeConfig;
  kubeconfigYaml: string;
  writeKubeconfig(path: string): Promise<void>;
  /** Live fault settings: changes apply to the next HTTP request (never to the controllers' own writes). */
  faults: FaultSettings;
  /** With a ManualClock: moves time forward, stopping at every moment a controller expects a change. */
  advance(ms: number): Promise<void>;
  /** Runs the controllers until they change nothing more. */
  settle(): Promise<void>;
  /**
   * Calls `listener` with every change the store makes (of one `group/Kind` when `typeKey` is given),
   * synchronously and with the stored object, which it must not change; returns the unsubscribe
   * function. For benches that follow thousands of objects without paying for a watch of their own.
   */
  subscribe(listener: (event: StoreEvent) => void, typeKey?: string): () => void;
  /** Every write request answered over HTTP, in order (the controllers' own writes are not requests). */
  audit: WriteAudit;
  /**
   * Restarts the API server as a real one restarts: every connection (watches included) is cut, nothing
   * answers for `downMs`, then it listens again on the same address with every object kept (etcd keeps
   * them) but no watch history, so a watch resumed from an earlier resourceVersion gets 410 Gone.
   */
  restart(options?: { downMs?: number }): Promise<void>;
  /**
   * A bearer token for a ServiceAccount, as `kubectl create token` mints one (TokenRequest, 1 h by
   * default); throws `SandboxServiceAccountError` when the ServiceAccount does not exist.
   */
  serviceAccountToken(namespace: string, name: string, options?: { expirationSeconds?: number }): string;
  /**
   * Every request RBAC mode refused, in order: who and the 403's message. A test running a process as a
   * ServiceAccount asserts this stays empty, so a missing permission fails it even when the process only
   * logs the 403 and retries.
   */
  forbidden: ReadonlyArray<{ user: string; message: string }>;
  /** A kubeconfig (YAML) for this sandbox that authenticates with `token` instead of the admin's. */
  kubeconfigYamlWithToken(token: string): string;
  stop(): Promise<void>;
}

/** Thrown by `serviceAccountToken` for a ServiceAccount the sandbox does not hold. */
export class SandboxServiceAccountError extends Error {
  override readonly name = 'SandboxServiceAccountError';
  readonly code = 'sandbox.serviceaccount.not-found';
  constructor(namespace: string, name: string) {
    super(`sandbox: no ServiceAccount ${namespace}/${name} to mint a token for`);
  }
}

/** Thrown by `advance` when the sandbox runs on a clock it cannot move. */
export class SandboxClockError extends Error {
  override readonly name = 'SandboxClockError';
  readonly code = 'sandbox.clock.not-manual';
  constructor() {
    super('sandbox.advance() needs a ManualClock (startSandbox({ clock: new ManualClock() }))');
  }
}

const SYSTEM_CLOCK_WAKE_CAP_MS = 500;
const BUILTIN_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Starts the sandbox API server and its controllers; resolves once it accepts connections. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const seed = options.seed ?? 1;
  const faults: FaultSettings = { ...noFaults, ...options.faults };
  const store = new ObjectStore({
    clock,
    random: new SeededRandom(seed),
    historyLimit: options.historyLimit ?? 10_000,
  });
  const registry = new ResourceRegistry();
  const loop = new ControllerLoop({
    store,
    registry,
    clock,
    logger,
    options: {
      missingImages: options.missingImages ?? defaultControllerOptions.missingImages,
      readyDelayMs: options.readyDelayMs ?? defaultControllerOptions.readyDelayMs,
    },
  });
  store.subscribe((event) => {
    if (event.typeKey !== 'apiextensions.k8s.io/CustomResourceDefinition') return;
    const name = event.object.metadata.name ?? '';
    if (event.type === 'DELETED') loop.cleanupCrdObjects(registry.unregisterCrd(name));
    else if (event.object.metadata.deletionTimestamp === undefined) registry.registerCrd(event.object);
  });
  const nsType = registry.builtIn('', 'Namespace');
  for (const name of BUILTIN_NAMESPACES)
    store.create(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, '');
  if (options.rbac) storeBootstrapPolicy(store, registry);
  const token = options.token;
  const serviceAccountTokens = new ServiceAccountTokens(store, registry, clock);
  const forbidden: Array<{ user: string; message: string }> = [];

  let stopped = false;
  let scheduled: NodeJS.Immediate | undefined;
  let wakeTimer: NodeJS.Timeout | undefined;
  const run = (): void => {
    scheduled = undefined;
    if (stopped) return;
    try {
      loop.runToQuiescence();
    } catch (err) {
      logger.error({ err }, 'sandbox controllers failed');
    }
    if (!(clock instanceof ManualClock)) armWakeTimer();
  };
  const armWakeTimer = (): void => {
    if (wakeTimer) clearTimeout(wakeTimer);
    wakeTimer = undefined;
    const next = loop.nextChangeAt;
    if (!next || stopped) return;
    const delay = Math.min(Math.max(next.getTime() - clock.now().getTime(), 5), SYSTEM_CLOCK_WAKE_CAP_MS);
    wakeTimer = setTimeout(schedule, delay);
    wakeTimer.unref();
  };
  const schedule = (): void => {
    if (scheduled || stopped) return;
    scheduled = setImmediate(run);
  };
  const unsubscribeClock = clock instanceof ManualClock ? clock.onAdvance(() => schedule()) : () => undefined;

  const audit = new WriteAudit();
  const server = new ApiServer({
    store,
    registry,
    clock,
    faults,
    faultRandom: new SeededRandom(seed ^ 0x5bd1e995),
    random: new SeededRandom(seed ^ 0x27d4eb2f),
    patches: sandboxPatchEngines,
    logger,
    ...(token !== undefined ? { token } : {}),
    serviceAccountTokens,
    ...(options.rbac ? { authorizer: new RbacAuthorizer(store, registry) } : {}),
    onForbidden: (user, message) => forbidden.push({ user, message }),
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 10_000,
    onWrite: schedule,
    audit,
  });
  const bound = await server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  const hostForUrl = bound.host.includes(':') ? `[${bound.host}]` : bound.host;
  const url = `http://${hostForUrl}:${bound.port}`;
  const kubeconfigYaml = sandboxKubeconfigYaml(url, token);
  loop.runToQuiescence();
  if (!(clock instanceof ManualClock)) armWakeTimer();

  const settleNow = (): void => {
    if (scheduled) {
      clearImmediate(scheduled);
      scheduled = undefined;
    }
    loop.runToQuiescence();
  };

  return {
    url,
    kubeConfig: sandboxKubeConfig(url, token),
    kubeconfigYaml,
    faults,
    audit,
    async restart({ downMs = 0 } = {}): Promise<void> {
      await server.close();
      store.compact();
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await server.listen(bound.port, bound.host);
    },
    serviceAccountToken(namespace, name, { expirationSeconds } = {}) {
      const minted = serviceAccountTokens.mint(namespace, name, expirationSeconds);
      if (!minted) throw new SandboxServiceAccountError(namespace, name);
      return minted.token;
    },
    forbidden,
    kubeconfigYamlWithToken: (serviceAccountToken) => sandboxKubeconfigYaml(url, serviceAccountToken),
    async writeKubeconfig(path: string): Promise<void> {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, kubeconfigYaml, { mode: 0o600 });
    },
    subscribe: (listener, typeKey) => store.subscribe(listener, typeKey),
    async settle(): Promise<void> {
      settleNow();
      await new Promise((resolve) => setImmediate(resolve));
    },
    async advance(ms: number): Promise<void> {
      if (!(clock instanceof ManualClock)) throw new SandboxClockError();
      const target = clock.now().getTime() + ms;
      settleNow();
      for (;;) {
        const next = loop.nextChangeAt?.getTime();
        const now = clock.now().getTime();
        if (next === undefined || next > target) break;
        clock.advance(Math.max(next - now, 1));
        settleNow();
      }
      const rest = target - clock.now().getTime();
      if (rest > 0) clock.advance(rest);
      settleNow();
      await new Promise((resolve) => setImmediate(resolve));
    },
    async stop(): Promise<void> {
      stopped = true;
      unsubscribeClock();
      if (scheduled) clearImmediate(scheduled);
      if (wakeTimer) clearTimeout(wakeTimer);
      await server.close();
    },
  };
}
