// One Git server, one repository and one in-process Rollgate syncing it into a namespace of the real server, with what a test reads back.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { inject } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { serveGitRepositories, type GitServer } from '../../../src/git/smart-http-server.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { createRollgateMetrics, type RollgateMetrics } from '../../../src/server/metrics.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { createBareRepository, makeTempDir, WorkingCopy, type TempDir } from '../../support/git-fixtures.ts';
import { createTestNamespace, type RealCluster } from './real-cluster.ts';
import type { KubeConfig } from '@kubernetes/client-node';

/** What the tests read of a Rollout. */
export interface LiveRollout {
  metadata?: { generation?: number; labels?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: {
    phase?: string;
    message?: string;
    abort?: boolean;
    stableRS?: string;
    currentPodHash?: string;
    currentStepIndex?: number;
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
    canary?: { currentStepAnalysisRunStatus?: { name?: string; status?: string } };
  };
}

/** A ReplicaSet as the tests count them. */
export interface LiveReplicaSet {
  name: string;
  podTemplateHash: string;
  image: string;
  replicas: number;
  readyReplicas: number;
}

export interface RollgateInScene {
  running: RunningProcess;
  metrics: RollgateMetrics;
  /** Everything Rollgate logged so far (JSON lines, debug level). */
  logged(): string;
}

export interface GitopsScene {
  namespace: string;
  /** The admin's clients (what a test reads must not count against Rollgate's identity). */
  clients: KubeClients;
  tmp: TempDir;
  repoUrl: string;
  /** Writes (or, with null, removes) files, commits and pushes them; the commit's SHA. */
  push(files: Record<string, string | null>, message: string): Promise<string>;
  /**
   * Starts Rollgate (role all) syncing the repository into the namespace as `source`, reaching the
   * API server as `kubeConfig` says (default: the admin), from `path` of the repository (default: all of it).
   */
  startRollgate(options: {
    source: string;
    /** The API groups the process drives (controller.groups; default Rollgate's own). */
    groups?: string[];
    path?: string;
    prune?: boolean;
    kubeConfig?: KubeConfig;
  }): Promise<RollgateInScene>;
  rollout(name: string): Promise<LiveRollout | undefined>;
  replicaSets(app: string): Promise<LiveReplicaSet[]>;
  /** Pods of `app` running `image`, Ready and not being deleted. */
  readyPods(app: string, image: string): Promise<number>;
  sourceStatus(source: string): Promise<SourceStatus | undefined>;
  /** The rollout's status, ReplicaSets and pods in one line, for a timeout's message. */
  describe(app: string): Promise<string>;
  stop(): Promise<void>;
}

/** A namespace, a Git server with an empty repository `apps`, a working copy; Rollgate when asked. */
export async function openGitopsScene(cluster: RealCluster, prefix: string): Promise<GitopsScene> {
  const ns = await createTestNamespace(cluster, prefix);
  const namespace = ns.name;
  const { clients } = cluster;
  const tmp = makeTempDir(`rollgate-${prefix}-`);
  createBareRepository(join(tmp.path, 'repos'), 'apps');
  const git: GitServer = await serveGitRepositories({ root: join(tmp.path, 'repos'), receivePack: true });
  const repoUrl = `${git.url}/apps.git`;
  const work = new WorkingCopy(join(tmp.path, 'work'));
  const started: RunningProcess[] = [];

  const scene: GitopsScene = {
    namespace,
    clients,
    tmp,
    repoUrl,
    async push(files, message) {
      work.write(files);
      const sha = work.commit(message);
      await work.push(repoUrl);
      return sha;
    },
    async startRollgate({ source, groups, path = '.', prune = false, kubeConfig = cluster.kubeConfig }) {
      const config = configSchema.parse({
        log: { level: 'debug' },
        redis: { url: inject('redisUrl'), prefix: `real-${randomUUID().slice(0, 8)}` },
        server: { host: '127.0.0.1', port: 0 },
        workers: { concurrency: 4 },
        git: { cacheDir: join(tmp.path, `cache-${source}`) },
        kubernetes: { defaultNamespace: namespace },
        ...(groups !== undefined ? { controller: { groups } } : {}),
        sources: [{ name: source, url: repoUrl, branch: 'main', path, interval: '1s', namespace, prune }],
      });
      const out = new PassThrough();
      let logged = '';
      out.on('data', (chunk: Buffer) => (logged += chunk.toString()));
      const runtime = openRuntime(config, {
        logger: createLogger({ level: 'debug', format: 'json', destination: out }),
        kube: {
          clients: createKubeClients(kubeConfig),
          namespace,
          source: 'flag',
          origin: kubeConfig.getCurrentCluster()?.server ?? '',
        },
      });
      const metrics = createRollgateMetrics({ processMetrics: false });
      const running = await startProcess(runtime, { role: 'all', metrics });
      started.push(running);
      return { running, metrics, logged: () => logged };
    },
    async rollout(name) {
      const obj = await clients.custom
        .getNamespacedCustomObject({
          group: 'rollgate.dev',
          version: 'v1alpha1',
          namespace,
          plural: 'rollouts',
          name,
        })
        .catch(() => undefined);
      return obj === undefined ? undefined : toPlainObject<LiveRollout>(obj);
    },
    async replicaSets(app) {
      const list = await clients.apps.listNamespacedReplicaSet({ namespace, labelSelector: `app=${app}` });
      return list.items
        .filter((rs) => rs.metadata?.deletionTimestamp === undefined)
        .map((rs) => ({
          name: rs.metadata?.name ?? '',
          podTemplateHash: rs.metadata?.labels?.['rollouts-pod-template-hash'] ?? '',
          image: rs.spec?.template?.spec?.containers[0]?.image ?? '',
          replicas: rs.spec?.replicas ?? 0,
          readyReplicas: rs.status?.readyReplicas ?? 0,
        }));
    },
    async readyPods(app, image) {
      const pods = await clients.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
      return pods.items.filter(
        (p) =>
          p.metadata?.deletionTimestamp === undefined &&
          p.spec?.containers[0]?.image === image &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
    },
    async sourceStatus(source) {
      const cm = await clients.core
        .readNamespacedConfigMap({ name: `rollgate-source-${source}`, namespace: 'rollgate-system' })
        .catch(() => undefined);
      const text = cm?.data?.status;
      return text === undefined ? undefined : (JSON.parse(text) as SourceStatus);
    },
    async describe(app) {
      const pods = await clients.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
      return JSON.stringify({
        status: (await scene.rollout(app))?.status,
        replicaSets: await scene.replicaSets(app),
        pods: pods.items.map((p) => ({
          name: p.metadata?.name,
          image: p.spec?.containers[0]?.image,
          deleting: p.metadata?.deletionTimestamp !== undefined,
          phase: p.status?.phase,
          ready: p.status?.conditions?.find((c) => c.type === 'Ready')?.status,
        })),
      });
    },
    async stop() {
      for (const running of started.splice(0)) await running.stop({ force: true });
      await git.stop();
      tmp.remove();
      await ns.remove();
    },
  };
  return scene;
}
