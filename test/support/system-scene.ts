// The whole-system stage the end-to-end tests share: a cluster (the sandbox, or one given), a private Redis
// prefix, bare Git repositories served over smart HTTP, and Rollgate (in this process or as child processes),
// each part optional, all torn down by one stop() in the reverse order of their start.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { Redis } from 'ioredis';
import { configSchema, type RollgateConfig } from '../../src/config/index.ts';
import { serveGitRepositories, type GitServer } from '../../src/git/smart-http-server.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../src/kube/client.ts';
import { createLogger, silentLogger, type Logger } from '../../src/log/logger.ts';
import {
  openRuntime,
  withRegisteredClusters,
  type Runtime,
  type RuntimeOverrides,
} from '../../src/process/runtime.ts';
import {
  startProcess,
  type RunningProcess,
  type StartProcessOptions,
} from '../../src/process/start-process.ts';
import { createRedisConnection } from '../../src/queue/redis-connection.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { createRollgateMetrics, type RollgateMetrics } from '../../src/server/metrics.ts';
import { eventually } from './eventually.ts';
import { createBareRepository, makeTempDir, WorkingCopy, type TempDir } from './git-fixtures.ts';
import { deleteKeysUnder } from './redis-test-prefix.ts';
import { installCli, startRollgate, type RollgateProcess } from './rollgate-processes.ts';

/** Configuration sections, as a config file holds them (validated by configSchema when Rollgate starts). */
export type ConfigSections = Record<string, unknown>;

export interface SystemSceneOptions {
  /** Names the scene's temporary folder and Redis prefix (`rg-NAME-…`), so a leftover says whose it is. */
  name: string;
  /** The run's Redis (inject('redisUrl')). */
  redisUrl: string;
  /** The Redis prefix (default `rg-NAME-` and eight random characters). */
  redisPrefix?: string;
  /** Delete the prefix's keys on stop (default false: most scenes' keys expire with the run's Redis). */
  deleteRedisKeys?: boolean;
  /** The cluster: a sandbox started for the scene (the default, with these options), or one given. */
  cluster?: { sandbox: SandboxOptions } | { kubeConfig: KubeConfig; namespace?: string };
  /** Empty bare repositories (`NAME.git`, branch main) created and served over smart HTTP, pushes allowed. */
  repositories?: string[];
  /** Serves the repositories' folder (default serveGitRepositories in this process, receive-pack on). */
  gitServer?: (root: string) => Promise<GitServer>;
  /** Sections every Rollgate of the scene is configured with, beside the scene's own. */
  config?: ConfigSections;
  /** Rollgate's logger: silent by default; `capture` keeps its JSON lines for {@link SystemScene.logged}. */
  logger?: Logger | { capture: 'debug' | 'info' };
  /** Runs once the cluster, Redis and Git are up, before Rollgate starts (CRDs, namespaces, ConfigMaps). */
  prepare?: (scene: SystemScene) => Promise<void>;
  /**
   * Starts one Rollgate (in this process) with these options before the scene is handed back (a function
   * reads what prepare made, such as a forge's URL).
   */
  rollgate?: RollgateStartOptions | ((scene: SystemScene) => RollgateStartOptions);
  /** The folder of the test run (inject('runDir')), where the CLI is installed for child processes. */
  cliRunDir?: string;
}

export interface RollgateStartOptions {
  /** The process's role (default all). */
  role?: StartProcessOptions['role'];
  /** Sections beside the scene's (and over them, section by section). */
  config?: ConfigSections;
  /**
   * A whole configuration loaded as the CLI loads it (file and environment), used as it is: Rollgate then
   * connects to the cluster as that configuration says (its kubeconfig), not through the scene's clients.
   */
  loadedConfig?: RollgateConfig;
  /** This process's logger (default the scene's). */
  logger?: Logger;
  /** The API server as this process reaches it (default the scene's cluster as its admin). */
  kubeConfig?: KubeConfig;
  /** Process metrics on its own registry (default true). */
  processMetrics?: boolean;
  /** More of startProcess's options. */
  start?: Omit<StartProcessOptions, 'role' | 'metrics'>;
  /** The clusters it serves, built around the scene's (local) connection; default that one alone. */
  clusters?: RuntimeOverrides['clusters'];
}

export interface RuntimeOpenOptions {
  /** Default: the scene's configuration (configWith()). */
  config?: RollgateConfig;
  logger?: Logger;
  kubeConfig?: KubeConfig;
  clusters?: RuntimeOverrides['clusters'];
}

/** A Rollgate started by the scene in this process. */
export interface SceneRollgate {
  running: RunningProcess;
  config: RollgateConfig;
  runtime: Runtime;
  /** Its own metrics registry. */
  metrics: RollgateMetrics;
  /** Jobs of `queue` it has finished, of any outcome. */
  jobs(queue: string): Promise<number>;
  /** Reconcile jobs it has run (resyncs included; rollgate_reconcile_duration_seconds counts one a job). */
  reconcileJobs(): Promise<number>;
}

/** The parts of a live Rollout a wait reads. */
export interface SceneRollout {
  metadata?: {
    name?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: {
    phase?: string;
    observedGeneration?: string;
    message?: string;
    currentStepIndex?: number;
    stableRS?: string;
    currentPodHash?: string;
  };
}

export interface SceneReplicaSet {
  name: string;
  hash: string;
  replicas: number;
  image: string;
}

export interface SystemScene {
  tmp: TempDir;
  /** The sandbox, unless the scene was given a cluster. */
  sandbox: Sandbox | undefined;
  kubeConfig: KubeConfig;
  /** The admin's clients. */
  clients: KubeClients;
  /** The namespace Rollgate defaults to. */
  namespace: string;
  redis: {
    url: string;
    prefix: string;
    /** A connection of the test's own (opened on first use, closed by stop()). */
    connection(): Redis;
  };
  /** The Git server, when the scene has repositories. */
  git: GitServer | undefined;
  /** `URL/NAME.git` of a served repository (default the first). */
  repoUrl(name?: string): string;
  /** A working copy (a folder of the scene) to commit and push to the repositories. */
  workingCopy(name?: string): WorkingCopy;
  /** A kubeconfig file for the cluster (admin), written on first use. */
  kubeconfigPath(): Promise<string>;
  /** The real kubectl against the cluster as its admin; `input` is its stdin. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** `kubectl apply -f` of YAML text (written to a file of the scene first). */
  apply(fileName: string, yaml: string): Promise<void>;
  /**
   * The objects of YAML text by server-side apply through the client (field manager `kubectl`, conflicts
   * forced), as `kubectl apply --server-side --force-conflicts` would send them, without a kubectl start
   * (~0.2 s of CPU each, docs/BENCHMARKS.md): for a stage a test sets, where kubectl is not the subject.
   * `name` names the text in errors.
   */
  applyThroughClient(name: string, yaml: string): Promise<void>;
  /** Creates a namespace through the client. */
  createNamespace(name: string): Promise<void>;
  /** Rollgate's configuration for this scene with `sections` over the scene's own. */
  configWith(sections?: ConfigSections): RollgateConfig;
  /**
   * Opens Rollgate's connections (Redis, the cluster) with the scene's configuration, for a test that starts
   * parts of Rollgate itself; stop() closes them.
   */
  openRuntime(options?: RuntimeOpenOptions): Runtime;
  /** Starts a Rollgate in this process; stop() stops it (forced) unless the test did. */
  startRollgate(options?: RollgateStartOptions): Promise<SceneRollgate>;
  /** The first Rollgate the scene started (throws when none was). */
  readonly rollgate: SceneRollgate;
  /** Stops the latest Rollgate (gracefully) and starts another with the same options. */
  restartRollgate(): Promise<SceneRollgate>;
  /**
   * `rollgate ROLE` as a child process of the installed CLI (needs cliRunDir), on this cluster and Redis
   * prefix, on a free loopback port, logging JSON; `args` come after those.
   */
  startChild(label: string, role: 'run' | 'poller' | 'reconciler', args?: string[]): RollgateProcess;
  /** The installed CLI's folder (needs cliRunDir). */
  readonly cliRoot: string;
  /** Everything the scene's captured logger wrote (JSON lines). */
  logged(): string;
  rollout<T = SceneRollout>(name: string, namespace?: string): Promise<T | undefined>;
  replicaSets(namespace?: string): Promise<SceneReplicaSet[]>;
  /** Waits until the Rollout exists and `test` holds of it; resolves with it. */
  waitForRollout<T = SceneRollout>(
    what: string,
    name: string,
    test: (rollout: T) => boolean,
    options?: { namespace?: string; timeoutMs?: number },
  ): Promise<T>;
  /** Runs `fn` at stop(), before the parts started earlier are stopped. */
  defer(fn: () => unknown): void;
  /** Stops everything in the reverse order of its start; every step runs even when one fails. */
  stop(): Promise<void>;
}

const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts' } as const;

/** Starts the scene's parts; a failed start stops what had started, then throws. */
export async function startSystemScene(options: SystemSceneOptions): Promise<SystemScene> {
  const deferred: Array<() => unknown> = [];
  const defer = (fn: () => unknown): void => void deferred.push(fn);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const errors: unknown[] = [];
    for (const fn of deferred.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  };
  try {
    return await compose(options, defer, stop);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

async function compose(
  options: SystemSceneOptions,
  defer: (fn: () => unknown) => void,
  stop: () => Promise<void>,
): Promise<SystemScene> {
  const tmp = makeTempDir(`rollgate-${options.name}-`);
  defer(() => tmp.remove());
  const prefix = options.redisPrefix ?? `rg-${options.name}-${randomUUID().slice(0, 8)}`;
  let connection: Redis | undefined;
  const redisConnection = (): Redis => (connection ??= createRedisConnection(options.redisUrl));
  defer(async () => {
    try {
      if (options.deleteRedisKeys) await deleteKeysUnder(redisConnection(), prefix);
    } finally {
      connection?.disconnect();
    }
  });

  const cluster = options.cluster ?? { sandbox: { readyDelayMs: 100 } };
  let sandbox: Sandbox | undefined;
  if ('sandbox' in cluster) {
    const started = await startSandbox(cluster.sandbox);
    sandbox = started;
    defer(() => started.stop());
  }
  const kubeConfig = sandbox?.kubeConfig ?? (cluster as { kubeConfig: KubeConfig }).kubeConfig;
  const namespace = ('namespace' in cluster ? cluster.namespace : undefined) ?? 'default';
  const clients = createKubeClients(kubeConfig);

  const repositories = options.repositories ?? [];
  let git: GitServer | undefined;
  if (repositories.length > 0) {
    const root = join(tmp.path, 'repos');
    for (const name of repositories) createBareRepository(root, name);
    const served = await (options.gitServer ?? ((r) => serveGitRepositories({ root: r, receivePack: true })))(
      root,
    );
    git = served;
    defer(() => served.stop());
  }

  let logText = '';
  let logger: Logger = silentLogger;
  if (options.logger && 'capture' in options.logger) {
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
    logger = createLogger({ level: options.logger.capture, format: 'json', destination: out });
  } else if (options.logger) logger = options.logger;

  let kubeconfigFile: Promise<string> | undefined;
  const kubeconfigPath = (): Promise<string> => {
    kubeconfigFile ??= (async () => {
      const path = join(tmp.path, 'kubeconfig');
      if (sandbox) await sandbox.writeKubeconfig(path);
      else writeFileSync(path, kubeConfig.exportConfig(), { mode: 0o600 });
      return path;
    })();
    return kubeconfigFile;
  };
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const path = await kubeconfigPath();
    return new Promise((resolve, reject) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', path, '--cache-dir', join(tmp.path, 'kube-cache'), ...args],
        { timeout: 30_000, maxBuffer: 16 << 20 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  };

  let caches = 0;
  const configWith = (sections: ConfigSections = {}): RollgateConfig => {
    const merged: ConfigSections = {
      log: { level: 'silent' },
      redis: { url: options.redisUrl, prefix },
      server: { host: '127.0.0.1', port: 0 },
      git: { cacheDir: join(tmp.path, `cache-${caches++}`) },
    };
    for (const layer of [options.config ?? {}, sections])
      for (const [key, value] of Object.entries(layer))
        merged[key] = isSection(value) && isSection(merged[key]) ? { ...merged[key], ...value } : value;
    return configSchema.parse(merged);
  };

  const started: SceneRollgate[] = [];
  let last: RollgateStartOptions = {};
  const openSceneRuntime = (open: RuntimeOpenOptions = {}): Runtime => {
    const reach = open.kubeConfig;
    const runtime = openRuntime(open.config ?? configWith(), {
      logger: open.logger ?? logger,
      kube: {
        clients: reach ? createKubeClients(reach) : clients,
        namespace,
        source: 'flag',
        origin: reach
          ? (reach.getCurrentCluster()?.server ?? '')
          : (sandbox?.url ?? kubeConfig.getCurrentCluster()?.server ?? ''),
      },
      ...(open.clusters ? { clusters: open.clusters } : {}),
    });
    defer(() => runtime.close());
    return runtime;
  };

  const startInProcess = async (start: RollgateStartOptions = {}): Promise<SceneRollgate> => {
    last = start;
    const config = start.loadedConfig ?? configWith(start.config);
    // As `rollgate run` does: clusters the config registers (contexts, Argo CD cluster Secrets) are opened.
    const runtime = await withRegisteredClusters(
      start.loadedConfig
        ? openRuntime(config, { logger: start.logger ?? logger })
        : openSceneRuntime({
            config,
            ...(start.logger ? { logger: start.logger } : {}),
            ...(start.kubeConfig ? { kubeConfig: start.kubeConfig } : {}),
            ...(start.clusters ? { clusters: start.clusters } : {}),
          }),
      { chosen: start.clusters !== undefined },
    );
    if (start.loadedConfig || runtime.registered) defer(() => runtime.close());
    const metrics = createRollgateMetrics(start.processMetrics === false ? { processMetrics: false } : {});
    const running = await startProcess(runtime, { ...start.start, role: start.role ?? 'all', metrics });
    defer(() => running.stop({ force: true }).catch(() => undefined));
    const rollgate: SceneRollgate = {
      running,
      config,
      runtime,
      metrics,
      async jobs(queue) {
        return (await metrics.jobsTotal.get()).values
          .filter((v) => v.labels.queue === queue)
          .reduce((sum, v) => sum + v.value, 0);
      },
      async reconcileJobs() {
        return (await metrics.reconcileDurationSeconds.get()).values
          .filter((v) => v.metricName === 'rollgate_reconcile_duration_seconds_count')
          .reduce((sum, v) => sum + v.value, 0);
      },
    };
    started.push(rollgate);
    return rollgate;
  };

  let cliRoot: string | undefined;
  if (options.cliRunDir !== undefined) cliRoot = await installCli(options.cliRunDir);

  const rollout = async <T>(name: string, ns = namespace): Promise<T | undefined> => {
    try {
      return toPlainObject<T>(
        await clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, namespace: ns, name }),
      );
    } catch {
      return undefined;
    }
  };

  const scene: SystemScene = {
    tmp,
    sandbox,
    kubeConfig,
    clients,
    namespace,
    redis: { url: options.redisUrl, prefix, connection: redisConnection },
    git,
    repoUrl(name = repositories[0] ?? 'apps') {
      if (!git) throw new Error('the scene serves no repositories (options.repositories)');
      return `${git.url}/${name}.git`;
    },
    workingCopy: (name = 'work') => new WorkingCopy(join(tmp.path, name)),
    kubeconfigPath,
    kubectl,
    async apply(fileName, yaml) {
      const path = join(tmp.path, fileName);
      writeFileSync(path, yaml);
      await kubectl(['apply', '-f', path]);
    },
    async applyThroughClient(name, yaml) {
      const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
      for (const document of parseAllDocuments(yaml)) {
        if (document.errors.length > 0) throw new Error(`${name}: ${document.errors[0]!.message}`);
        const object = document.toJSON() as KubernetesObject | null;
        if (object === null) continue;
        await objects.patch(object, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
      }
    },
    async createNamespace(name) {
      await clients.core.createNamespace({ body: { metadata: { name } } });
    },
    configWith,
    openRuntime: openSceneRuntime,
    startRollgate: startInProcess,
    get rollgate() {
      const first = started[0];
      if (!first) throw new Error('the scene has started no Rollgate');
      return first;
    },
    async restartRollgate() {
      await started.at(-1)?.running.stop();
      return startInProcess(last);
    },
    startChild(label, role, args = []) {
      if (cliRoot === undefined) throw new Error('startChild needs options.cliRunDir');
      const child = startRollgate(cliRoot, label, role, [
        '--kubeconfig',
        join(tmp.path, 'kubeconfig'),
        '--redis',
        options.redisUrl,
        '--port',
        '0',
        '--set',
        'server.host=127.0.0.1',
        '--set',
        `redis.prefix=${prefix}`,
        '--set',
        'log.format=json',
        ...args,
      ]);
      defer(() => child.stop());
      return child;
    },
    get cliRoot() {
      if (cliRoot === undefined) throw new Error('the scene has no CLI (options.cliRunDir)');
      return cliRoot;
    },
    logged: () => logText,
    rollout,
    async replicaSets(ns = namespace) {
      const list = await clients.apps.listNamespacedReplicaSet({ namespace: ns });
      return list.items.map((rs) => ({
        name: rs.metadata?.name ?? '',
        hash: rs.metadata?.labels?.['rollouts-pod-template-hash'] ?? '',
        replicas: rs.spec?.replicas ?? 0,
        image: rs.spec?.template?.spec?.containers[0]?.image ?? '',
      }));
    },
    waitForRollout: <T>(
      what: string,
      name: string,
      test: (live: T) => boolean,
      wait: { namespace?: string; timeoutMs?: number } = {},
    ) =>
      eventually(
        what,
        async () => {
          const live = await rollout<T>(name, wait.namespace);
          return live !== undefined && test(live) ? live : undefined;
        },
        { timeoutMs: wait.timeoutMs ?? 30_000, intervalMs: 50 },
      ),
    defer,
    stop,
  };
  // The child processes read the kubeconfig file: write it now, so startChild stays synchronous.
  if (cliRoot !== undefined) await kubeconfigPath();
  await options.prepare?.(scene);
  if (options.rollgate)
    await startInProcess(typeof options.rollgate === 'function' ? options.rollgate(scene) : options.rollgate);
  return scene;
}

function isSection(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
