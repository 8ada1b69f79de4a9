// One Git server, one repository and one in-process Rollgate syncing it into a namespace of the real server, with what a test reads back.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { inject } from 'vitest';
import type { KubeClients } from '../../../src/kube/client.ts';
import { createLogger } from '../../../src/log/logger.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { RollgateMetrics } from '../../../src/server/metrics.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import type { TempDir } from '../../support/git-fixtures.ts';
import { startSystemScene, type SceneRollout } from '../../support/system-scene.ts';
import { createTestNamespace, type RealCluster } from './real-cluster.ts';
import type { KubeConfig } from '@kubernetes/client-node';

/** What the tests read of a Rollout. */
export interface LiveRollout extends Omit<SceneRollout, 'status'> {
  metadata?: SceneRollout['metadata'] & { generation?: number };
  status?: NonNullable<SceneRollout['status']> & {
    abort?: boolean;
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
    /** More keys of the source's configuration (`serviceAccountName`, `scope`, …). */
    settings?: Record<string, unknown>;
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
  const system = await startSystemScene({
    name: prefix,
    redisUrl: inject('redisUrl'),
    cluster: { kubeConfig: cluster.kubeConfig, namespace },
    repositories: ['apps'],
  }).catch(async (err: unknown) => {
    await ns.remove();
    throw err;
  });
  const { tmp } = system;
  const repoUrl = system.repoUrl();
  const work = system.workingCopy();

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
    async startRollgate({
      source,
      groups,
      path = '.',
      prune = false,
      kubeConfig = cluster.kubeConfig,
      settings = {},
    }) {
      const out = new PassThrough();
      let logged = '';
      out.on('data', (chunk: Buffer) => (logged += chunk.toString()));
      const { running, metrics } = await system.startRollgate({
        kubeConfig,
        logger: createLogger({ level: 'debug', format: 'json', destination: out }),
        processMetrics: false,
        config: {
          log: { level: 'debug' },
          redis: { prefix: `real-${randomUUID().slice(0, 8)}` },
          workers: { concurrency: 4 },
          git: { cacheDir: join(tmp.path, `cache-${source}`) },
          kubernetes: { defaultNamespace: namespace },
          ...(groups !== undefined ? { controller: { groups } } : {}),
          sources: [
            {
              name: source,
              url: repoUrl,
              branch: 'main',
              path,
              interval: '1s',
              namespace,
              prune,
              ...settings,
            },
          ],
        },
      });
      return { running, metrics, logged: () => logged };
    },
    rollout: (name) => system.rollout<LiveRollout>(name),
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
      try {
        await system.stop();
      } finally {
        await ns.remove();
      }
    },
  };
  return scene;
}
