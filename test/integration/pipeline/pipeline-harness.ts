// A whole Rollgate (poller, sync, workers, webhook server) over a sandbox cluster and a served Git repo.
import type { RollgateConfig } from '../../../src/config/index.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import type { KubeClients } from '../../../src/kube/client.ts';
import type { Logger } from '../../../src/log/logger.ts';
import type { RollgateMetrics } from '../../../src/server/metrics.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { PollerOptions } from '../../../src/process/start-poller.ts';
import type { WorkingCopy } from '../../support/git-fixtures.ts';
import { postGithubPush } from '../../support/github-push.ts';
import { startSystemScene, type SceneRollgate, type SceneRollout } from '../../support/system-scene.ts';

/** The parts of a live Rollout these tests read. */
export interface LiveRollout extends SceneRollout {
  apiVersion: string;
  metadata: NonNullable<SceneRollout['metadata']>;
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
      /** render.kustomize.timeoutSeconds and maxOutputBytes (default the product's, 30 s and 16 MiB). */
      kustomize: { timeoutSeconds?: number; maxOutputBytes?: number };
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
  const scene = await startSystemScene({
    name: 'pipeline',
    redisUrl,
    cluster: {
      sandbox: {
        readyDelayMs: 100,
        ...(options.missingImages ? { missingImages: options.missingImages } : {}),
      },
    },
    repositories: ['apps'],
    ...(options.gitServer ? { gitServer: options.gitServer } : {}),
    config: { webhooks: { github: { secret: WEBHOOK_SECRET } } },
  });
  const repoUrl = scene.repoUrl();
  const work = scene.workingCopy();
  const metricsOf = new Map<RunningProcess, SceneRollgate>();
  let config = scene.configWith();
  const jobsOf = async (process: RunningProcess, queue: string): Promise<number> =>
    (await metricsOf.get(process)?.jobs(queue)) ?? 0;

  return {
    sandbox: scene.sandbox!,
    git: scene.git!,
    repoUrl,
    work,
    clients: scene.clients,
    get config() {
      return config;
    },
    async start(overrides = {}) {
      const rollgate = await scene.startRollgate({
        ...(overrides.logger ? { logger: overrides.logger } : {}),
        config: {
          ...(overrides.redisUrl ? { redis: { url: overrides.redisUrl } } : {}),
          workers: { concurrency: 4, lockDurationMs: overrides.lockDurationMs ?? 30_000 },
          ...(overrides.kustomize !== undefined ? { render: { kustomize: overrides.kustomize } } : {}),
          sources: (overrides.sources ?? [{ name: 'apps', path: '.' }]).map((source) => ({
            url: repoUrl,
            branch: 'main',
            interval: overrides.interval ?? '1h',
            prune: overrides.prune ?? false,
            selfHeal: overrides.selfHeal ?? false,
            ...source,
          })),
        },
        start: { redisCheckIntervalMs: 500, poller: { driftCheckEveryMs: 500, ...overrides.poller } },
      });
      config = rollgate.config;
      metricsOf.set(rollgate.running, rollgate);
      return rollgate.running;
    },
    metrics(process) {
      return metricsOf.get(process)?.metrics;
    },
    async polls(process) {
      const metrics = metricsOf.get(process)?.metrics;
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
    rollout: (name, namespace) => scene.rollout<LiveRollout>(name, namespace),
    async replicaSets(namespace) {
      return (await scene.replicaSets(namespace)).map(({ name, replicas, hash, image }) => ({
        name,
        replicas,
        hash,
        image,
      }));
    },
    stop: () => scene.stop(),
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
