// The reconciler process wakes a Rollout when the PodTemplate its workloadRef names changes: the watch, not the
// periodic resync (set to an hour here), brings the new template to the canary.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { MERGE_PATCH, createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startReconciler, type RunningReconciler } from '../../../src/process/start-reconciler.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';

const NAMESPACE = 'default';
let sandbox: Sandbox;
let clients: KubeClients;
let reconciler: RunningReconciler;

interface LiveRollout {
  status?: { phase?: string; stableRS?: string; currentPodHash?: string };
}

async function rollout(name: string): Promise<LiveRollout> {
  return toPlainObject<LiveRollout>(
    await clients.custom.getNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      name,
    }),
  );
}

beforeAll(async () => {
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: `rg-workload-wake-${randomUUID().slice(0, 8)}` },
    workers: { resyncMs: 3_600_000 },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  reconciler = await startReconciler(runtime);
}, 60_000);

afterAll(async () => {
  await reconciler?.stop({ force: true });
  await sandbox?.stop();
});

describe('workloadRef wake-ups', () => {
  it('a change of the referenced PodTemplate starts a new revision at once, with no resync', async () => {
    const name = 'from-template';
    await clients.core.createNamespacedPodTemplate({
      namespace: NAMESPACE,
      body: {
        metadata: { name, namespace: NAMESPACE },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: 'shop:1' }] },
        },
      },
    });
    await clients.custom.createNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Rollout',
        metadata: { name, namespace: NAMESPACE },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          workloadRef: { apiVersion: 'v1', kind: 'PodTemplate', name },
          strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
        },
      },
    });
    const healthy = await eventually(
      'the rollout to be Healthy',
      async () => {
        const live = await rollout(name);
        return live.status?.phase === 'Healthy' ? live : undefined;
      },
      { timeoutMs: 30_000 },
    );
    await clients.core.patchNamespacedPodTemplate(
      {
        namespace: NAMESPACE,
        name,
        body: { template: { spec: { containers: [{ name: 'app', image: 'shop:2' }] } } },
      },
      MERGE_PATCH,
    );
    const paused = await eventually(
      'the new revision to reach its pause',
      async () => {
        const live = await rollout(name);
        return live.status?.phase === 'Paused' ? live : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(paused.status?.currentPodHash).not.toBe(healthy.status?.currentPodHash);
    expect(paused.status?.stableRS).toBe(healthy.status?.stableRS);
  }, 90_000);
});
