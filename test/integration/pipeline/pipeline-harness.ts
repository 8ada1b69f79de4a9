// A whole Rollgate (poller, sync, workers, webhook server) over a sandbox cluster and a served Git repo.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { configSchema, type RollgateConfig } from '../../../src/config/index.ts';
import { serveGitRepositories, type GitServer } from '../../../src/git/smart-http-server.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger, type Logger } from '../../../src/log/logger.ts';
import { createRollgateMetrics, type RollgateMetrics } from '../../../src/server/metrics.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import type { PollerOptions } from '../../../src/process/start-poller.ts';
import { createBareRepository, makeTempDir, WorkingCopy, type TempDir } from '../../support/git-fixtures.ts';
import { postGithubPush } from '../../support/github-push.ts';

/** The parts of a live Rollout these tests read. */
export interface LiveRollout {
  apiVersion: string;
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: {
    phase?: string;
    message?: string;
    currentStepIndex?: number;
    stableRS?: string;
    currentPodHash?: string;
  };
}

export const WEBHOOK_SECRET = 'pipeline-test-secret';

export interface Pipeline {
  sandbox: Sandbox;
  git: GitServer;
  repoUrl: string;
  work: WorkingCopy;
  clients: KubeClients;
  config: RollgateConfig;
  start(
    overrides?: Partial<{
      interval: string;
      lockDurationMs: number;
      prune: boolean;
      selfHeal: boolean;
      redisUrl: string;
      /** The process's logger (default: silent). */
      logger: Logger;
      /** Poller options beside the harness's own (a drift check every 500 ms). */
      poller: PollerOptions;
      /** The sources, all on the served repository (default: one source `apps` on the whole of it). */
      sources: Array<{ name: string; path: string; render?: 'auto' | 'plain' | 'kustomize' }>;
    }>,
  ): Promise<RunningProcess>;
  /** The process's own metrics registry. */
  metrics(process: RunningProcess): RollgateMetrics | undefined;
  /** Polls the process has run, of any result (from its own metrics registry). */
  polls(process: RunningProcess): Promise<number>;
  /** Sync jobs the process has run, of any outcome (from its own metrics registry). */
  syncJobs(process: RunningProcess): Promise<number>;
  /** Reconcile jobs the process has run, of any outcome (from its own metrics registry). */
  reconcileJobs(process: RunningProcess): Promise<number>;
  /** Sends a GitHub push webhook for the branch, signed with `secret` (the configured one by default). */
  pushWebhook(process: RunningProcess, options?: { secret?: string }): Promise<Response>;
  rollout(name: string, namespace?: string): Promise<LiveRollout | undefined>;
  replicaSets(
    namespace?: string,
  ): Promise<Array<{ name: string; replicas: number; hash: string; image: string }>>;
  stop(): Promise<void>;
}

export async function startPipeline(
  redisUrl: string,
  options: {
    missingImages?: string[];
    /** Serves the repository (default: serveGitRepositories in this process, push allowed). */
    gitServer?: (root: string) => Promise<GitServer>;
  } = {},
): Promise<Pipeline> {
  const tmp: TempDir = makeTempDir('rollgate-pipeline-');
  const sandbox = await startSandbox({
    readyDelayMs: 100,
    ...(options.missingImages ? { missingImages: options.missingImages } : {}),
  });
  createBareRepository(join(tmp.path, 'repos'), 'apps');
  const root = join(tmp.path, 'repos');
  const git = await (options.gitServer ?? ((r) => serveGitRepositories({ root: r, receivePack: true })))(
    root,
  );
  const repoUrl = `${git.url}/apps.git`;
  const work = new WorkingCopy(join(tmp.path, 'work'));
  const clients = createKubeClients(sandbox.kubeConfig);
  const processes: RunningProcess[] = [];
  const metricsOf = new Map<RunningProcess, RollgateMetrics>();
  const prefix = `rg-pipeline-${randomUUID().slice(0, 8)}`;
  let config = configSchema.parse({});
  const jobsOf = async (process: RunningProcess, queue: string): Promise<number> => {
    const metrics = metricsOf.get(process);
    if (!metrics) return 0;
    return (await metrics.jobsTotal.get()).values
      .filter((v) => v.labels.queue === queue)
      .reduce((sum, v) => sum + v.value, 0);
  };

  return {
    sandbox,
    git,
    repoUrl,
    work,
    clients,
    get config() {
      return config;
    },
    async start(overrides = {}) {
      config = configSchema.parse({
        log: { level: 'silent' },
        redis: { url: overrides.redisUrl ?? redisUrl, prefix },
        server: { host: '127.0.0.1', port: 0 },
        workers: { concurrency: 4, lockDurationMs: overrides.lockDurationMs ?? 30_000 },
        git: { cacheDir: join(tmp.path, `cache-${processes.length}`) },
        sources: (overrides.sources ?? [{ name: 'apps', path: '.' }]).map((source) => ({
          url: repoUrl,
          branch: 'main',
          interval: overrides.interval ?? '1h',
          prune: overrides.prune ?? false,
          selfHeal: overrides.selfHeal ?? false,
          ...source,
        })),
        webhooks: { github: { secret: WEBHOOK_SECRET } },
      });
      const runtime = openRuntime(config, {
        logger: overrides.logger ?? silentLogger,
        kube: { clients, namespace: 'default', source: 'flag', origin: sandbox.url },
      });
      const metrics = createRollgateMetrics();
      const running = await startProcess(runtime, {
        role: 'all',
        metrics,
        redisCheckIntervalMs: 500,
        poller: { driftCheckEveryMs: 500, ...overrides.poller },
      });
      processes.push(running);
      metricsOf.set(running, metrics);
      return running;
    },
    metrics(process) {
      return metricsOf.get(process);
    },
    async polls(process) {
      const metrics = metricsOf.get(process);
      if (!metrics) return 0;
      return (await metrics.pollsTotal.get()).values.reduce((sum, v) => sum + v.value, 0);
    },
    async syncJobs(process) {
      return jobsOf(process, 'sync');
    },
    async reconcileJobs(process) {
      return jobsOf(process, 'reconcile');
    },
    async pushWebhook(process, opts = {}) {
      return postGithubPush({
        baseUrl: process.http.url,
        secret: opts.secret ?? WEBHOOK_SECRET,
        repoUrl,
        head: work.head(),
        fullName: 'test/apps',
      });
    },
    async rollout(name, namespace = 'default') {
      try {
        const obj = await clients.custom.getNamespacedCustomObject({
          group: 'rollgate.dev',
          version: 'v1alpha1',
          namespace,
          plural: 'rollouts',
          name,
        });
        return toPlainObject<LiveRollout>(obj);
      } catch {
        return undefined;
      }
    },
    async replicaSets(namespace = 'default') {
      const list = await clients.apps.listNamespacedReplicaSet({ namespace });
      return list.items.map((rs) => ({
        name: rs.metadata?.name ?? '',
        replicas: rs.spec?.replicas ?? 0,
        hash: rs.metadata?.labels?.['rollouts-pod-template-hash'] ?? '',
        image: rs.spec?.template?.spec?.containers[0]?.image ?? '',
      }));
    },
    async stop() {
      for (const p of processes.reverse()) await p.stop({ force: true }).catch(() => undefined);
      await git.stop();
      await sandbox.stop();
      tmp.remove();
    },
  };
}

/** A canary Rollout as users write it for Argo Rollouts. */
export function rolloutYaml(options: {
  name?: string;
  image: string;
  replicas?: number;
  steps?: string;
}): string {
  const name = options.name ?? 'web';
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ${name}
spec:
  replicas: ${options.replicas ?? 2}
  revisionHistoryLimit: 3
  progressDeadlineSeconds: 30
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
        - name: app
          image: ${options.image}
  strategy:
    canary:
      scaleDownDelaySeconds: 0
      steps:
${options.steps ?? '        - setWeight: 50\n        - pause: {}'}
`;
}
