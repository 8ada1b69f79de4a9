// The reconciler's informers list every kind in pages: the cache holds every object, whatever the page size.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startReconciler, type RunningReconciler } from '../../../src/process/start-reconciler.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';

const NAMESPACE = 'default';
const HASH = 'rollouts-pod-template-hash';
const COUNT = 7;

let sandbox: Sandbox;
let clients: KubeClients;
let reconciler: RunningReconciler | undefined;

beforeAll(async () => {
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  for (let i = 0; i < COUNT; i++) {
    const labels = { app: `lists-${i}`, [HASH]: `h${i}` };
    // Rollouts at 0 replicas: the reconcile this start enqueues has nothing to create.
    await clients.custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      body: {
        apiVersion: `${ROLLGATE_API_GROUP}/v1alpha1`,
        kind: 'Rollout',
        metadata: { name: `lists-${i}` },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: `lists-${i}` } },
          template: {
            metadata: { labels: { app: `lists-${i}` } },
            spec: { containers: [{ name: 'app', image: 'app:1' }] },
          },
          strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
        },
      },
    });
    await clients.apps.createNamespacedReplicaSet({
      namespace: NAMESPACE,
      body: {
        metadata: { name: `lists-${i}-h${i}`, labels },
        spec: {
          replicas: 0,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
        },
      },
    });
    await clients.core.createNamespacedPod({
      namespace: NAMESPACE,
      body: {
        metadata: { name: `lists-${i}-pod`, labels },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    });
  }
});

afterAll(async () => {
  await reconciler?.stop({ force: true });
  await sandbox?.stop();
});

describe('informer lists', () => {
  it('a start that lists in pages of 2 holds every Rollout, ReplicaSet and pod', async () => {
    const config = configSchema.parse({
      log: { level: 'silent' },
      redis: { url: inject('redisUrl'), prefix: `rg-lists-${randomUUID().slice(0, 8)}` },
    });
    const runtime = openRuntime(config, {
      logger: silentLogger,
      kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
    });
    reconciler = await startReconciler(runtime, { listPageSize: 2 });
    // 7 of each in pages of 2: four pages a kind (a client that stopped after the first page holds 2).
    // The start's reconciles may add their own ReplicaSets meanwhile: what was listed must all be there.
    const names = (kind: 'Rollout' | 'ReplicaSet' | 'Pod') =>
      reconciler!.cache.all(kind).map((o) => o.metadata?.name);
    const made = [...Array(COUNT).keys()];
    expect(names('Rollout')).toEqual(expect.arrayContaining(made.map((i) => `lists-${i}`)));
    expect(names('ReplicaSet')).toEqual(expect.arrayContaining(made.map((i) => `lists-${i}-h${i}`)));
    expect(names('Pod')).toEqual(expect.arrayContaining(made.map((i) => `lists-${i}-pod`)));
  });
});
