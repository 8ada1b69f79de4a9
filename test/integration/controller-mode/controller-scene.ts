// A Rollgate process in controller mode on a sandbox (the groups it drives, its role, its config), with Rollouts of either group to drive.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics, type RollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import { deleteKeysUnder } from '../../support/redis-test-prefix.ts';

export const NAMESPACE = 'default';

export type Group = 'rollgate.dev' | 'argoproj.io';

export interface LiveRollout {
  metadata: { uid: string; generation?: number; labels?: Record<string, string> };
  status?: {
    phase?: string;
    message?: string;
    currentStepIndex?: number;
    stableRS?: string;
    currentPodHash?: string;
    pauseConditions?: unknown[];
  };
}

export interface ControllerScene {
  sandbox: Sandbox;
  clients: KubeClients;
  kubeconfig: string;
  process: RunningProcess;
  metrics: RollgateMetrics;
  /** The process's HTTP server (health, metrics, dashboard). */
  url: string;
  create(group: Group, plural: string, body: object): Promise<void>;
  /** A canary Rollout `name` in `group`, its pods labelled `app` (4 replicas, image `shop/<app>:1`). */
  createCanary(
    group: Group,
    name: string,
    app: string,
    steps: unknown[],
    labels?: Record<string, string>,
  ): Promise<void>;
  setImage(group: Group, name: string, image: string): Promise<void>;
  read(group: Group, name: string): Promise<LiveRollout | undefined>;
  healthy(group: Group, name: string, hashNot?: string): Promise<LiveRollout>;
  pausedAt(group: Group, name: string, step: number): Promise<LiveRollout>;
  stop(): Promise<void>;
}

/**
 * Starts a sandbox and one Rollgate process driving `groups` (under a private Redis prefix), with whatever
 * else `config` adds (dashboard, sources, promotions). The start installs both groups' CRDs.
 */
export async function startControllerScene(options: {
  redisUrl: string;
  groups: Group[];
  role?: 'all' | 'reconciler';
  config?: Record<string, unknown>;
  sandbox?: Sandbox;
}): Promise<ControllerScene> {
  const sandbox = options.sandbox ?? (await startSandbox({ readyDelayMs: 50 }));
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'rollgate-ctl-scene-')), 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  const clients = createKubeClients(sandbox.kubeConfig);
  const prefix = `rg-ctl-${randomUUID().slice(0, 8)}`;
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: options.redisUrl, prefix },
    server: { host: '127.0.0.1', port: 0 },
    controller: { groups: options.groups },
    ...options.config,
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  const metrics = createRollgateMetrics({ processMetrics: false });
  let running: RunningProcess;
  try {
    running = await startProcess(runtime, { role: options.role ?? 'all', metrics });
  } catch (err) {
    await runtime.close();
    if (options.sandbox === undefined) await sandbox.stop();
    throw err;
  }

  const path = (group: Group, plural: string) => ({
    group,
    version: 'v1alpha1',
    namespace: NAMESPACE,
    plural,
  });
  const read = async (group: Group, name: string): Promise<LiveRollout | undefined> => {
    try {
      return toPlainObject<LiveRollout>(
        await clients.custom.getNamespacedCustomObject({ ...path(group, 'rollouts'), name }),
      );
    } catch {
      return undefined;
    }
  };
  const until = (
    what: string,
    test: (live: LiveRollout | undefined) => boolean,
    group: Group,
    name: string,
  ) =>
    eventually(
      what,
      async () => {
        const live = await read(group, name);
        return test(live) ? live : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );

  return {
    sandbox,
    clients,
    kubeconfig,
    process: running,
    metrics,
    url: running.http.url,
    async create(group, plural, body) {
      await clients.custom.createNamespacedCustomObject({ ...path(group, plural), body });
    },
    async createCanary(group, name, app, steps, labels) {
      await clients.custom.createNamespacedCustomObject({
        ...path(group, 'rollouts'),
        body: {
          apiVersion: `${group}/v1alpha1`,
          kind: 'Rollout',
          metadata: { name, namespace: NAMESPACE, ...(labels && { labels }) },
          spec: {
            replicas: 4,
            selector: { matchLabels: { app } },
            template: {
              metadata: { labels: { app } },
              spec: { containers: [{ name: 'app', image: `shop/${app}:1` }] },
            },
            strategy: { canary: { steps } },
          },
        },
      });
    },
    async setImage(group, name, image) {
      await clients.custom.patchNamespacedCustomObject({
        ...path(group, 'rollouts'),
        name,
        body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
      });
    },
    read,
    healthy: (group, name, hashNot) =>
      until(
        `${group} ${name} Healthy`,
        (live) => {
          const s = live?.status;
          return s?.phase === 'Healthy' && s.stableRS === s.currentPodHash && s.currentPodHash !== hashNot;
        },
        group,
        name,
      ) as Promise<LiveRollout>,
    pausedAt: (group, name, step) =>
      until(
        `${group} ${name} paused at step ${step}`,
        (live) => {
          const s = live?.status;
          return s?.phase === 'Paused' && s.currentStepIndex === step && (s.pauseConditions ?? []).length > 0;
        },
        group,
        name,
      ) as Promise<LiveRollout>,
    async stop() {
      await running.stop({ force: true }).catch(() => undefined);
      const redis = createRedisConnection(options.redisUrl);
      await deleteKeysUnder(redis, prefix);
      await deleteKeysUnder(redis, `${prefix}.argoproj.io`);
      redis.disconnect();
      if (options.sandbox === undefined) await sandbox.stop();
    },
  };
}
