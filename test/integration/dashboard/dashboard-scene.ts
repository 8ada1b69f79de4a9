// A running Rollgate (`startProcess`, role all) over a sandbox, with the dashboard's tokens set, and a canary to drive.
import { randomUUID } from 'node:crypto';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';

export const READ_TOKEN = `read-${randomUUID()}`;
export const ACTION_TOKEN = `act-${randomUUID()}`;

export interface DashboardScene {
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  url: string;
  /** A canary Rollout in `default` (steps: {@link STEPS} unless given). */
  createCanary(name: string, image: string, steps?: unknown[]): Promise<void>;
  setImage(name: string, image: string): Promise<void>;
  rollout(
    name: string,
  ): Promise<{ status?: { phase?: string; currentStepIndex?: number; stableRS?: string } }>;
  stop(): Promise<void>;
}

/** Steps with an indefinite pause, so a test decides when the canary moves on. */
export const STEPS = [{ setWeight: 25 }, { pause: {} }, { setWeight: 50 }, { pause: {} }];

export async function startDashboardScene(redisUrl: string): Promise<DashboardScene> {
  // Env variable names unique to this run, so parallel test files cannot see each other's tokens.
  const suffix = randomUUID().slice(0, 8).toUpperCase();
  const readEnv = `RG_TEST_DASHBOARD_READ_${suffix}`;
  const actionEnv = `RG_TEST_DASHBOARD_ACT_${suffix}`;
  process.env[readEnv] = READ_TOKEN;
  process.env[actionEnv] = ACTION_TOKEN;
  const sandbox = await startSandbox({ readyDelayMs: 100 });
  const clients = createKubeClients(sandbox.kubeConfig);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: redisUrl, prefix: `rg-dashboard-${randomUUID().slice(0, 8)}` },
    server: { host: '127.0.0.1', port: 0 },
    dashboard: { readTokenEnv: readEnv, actions: { enabled: true, tokenEnv: actionEnv } },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: 'default', source: 'flag', origin: sandbox.url },
  });
  const running = await startProcess(runtime, { role: 'all', metrics: createRollgateMetrics() });
  const group = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts', namespace: 'default' };
  return {
    sandbox,
    clients,
    process: running,
    url: running.http.url,
    async createCanary(name, image, steps = STEPS) {
      await clients.custom.createNamespacedCustomObject({
        ...group,
        body: {
          apiVersion: ROLLGATE_API_VERSION,
          kind: 'Rollout',
          metadata: { name, namespace: 'default', labels: { 'rollgate.dev/source': 'apps' } },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: name } },
            template: {
              metadata: { labels: { app: name } },
              spec: { containers: [{ name: 'app', image }] },
            },
            strategy: { canary: { steps } },
          },
        },
      });
    },
    async setImage(name, image) {
      const live = await clients.custom.getNamespacedCustomObject({ ...group, name });
      const spec = (
        live as unknown as { spec: { template: { spec: { containers: Array<{ image: string }> } } } }
      ).spec;
      spec.template.spec.containers[0]!.image = image;
      await clients.custom.replaceNamespacedCustomObject({ ...group, name, body: live });
    },
    async rollout(name) {
      return toPlainObject(await clients.custom.getNamespacedCustomObject({ ...group, name }));
    },
    async stop() {
      await running.stop({ force: true }).catch(() => undefined);
      await sandbox.stop();
      delete process.env[readEnv];
      delete process.env[actionEnv];
    },
  };
}
