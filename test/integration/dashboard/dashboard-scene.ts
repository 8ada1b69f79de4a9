// A running Rollgate (`startProcess`, role all) over a sandbox, with the dashboard's tokens set, and a canary to drive.
import { randomUUID } from 'node:crypto';
import { toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { startSystemScene } from '../../support/system-scene.ts';

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
  const scene = await startSystemScene({
    name: 'dashboard',
    redisUrl,
    config: { dashboard: { readTokenEnv: readEnv, actions: { enabled: true, tokenEnv: actionEnv } } },
    async prepare({ defer }) {
      process.env[readEnv] = READ_TOKEN;
      process.env[actionEnv] = ACTION_TOKEN;
      defer(() => {
        delete process.env[readEnv];
        delete process.env[actionEnv];
      });
    },
    rollgate: {},
  });
  const { clients } = scene;
  const running = scene.rollgate.running;
  const group = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts', namespace: 'default' };
  return {
    sandbox: scene.sandbox!,
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
    stop: () => scene.stop(),
  };
}
