// Controller mode: argoproj.io Rollouts applied directly (not by Rollgate's sync) are driven where they are, beside rollgate.dev ones.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock, systemClock, type Clock } from '../../../src/clock/clock.ts';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import { deleteKeysUnder } from '../../support/redis-test-prefix.ts';
import { runCli } from '../../support/run-cli.ts';

const NAMESPACE = 'default';
const ARGO_NAMESPACE = 'argo-rollouts';
const LEASE = 'argo-rollouts-controller-lock';

interface ArgoStatus {
  phase?: string;
  message?: string;
  currentStepIndex?: number;
  stableRS?: string;
  currentPodHash?: string;
  observedGeneration?: string;
  pauseConditions?: Array<{ reason?: string }>;
  canary?: {
    weights?: { canary?: { weight?: number; podTemplateHash?: string }; stable?: { weight?: number } };
  };
}
interface Live {
  metadata: { uid: string; generation?: number };
  status?: ArgoStatus;
}
interface Run {
  apiVersion: string;
  metadata: { name: string; ownerReferences?: Array<{ apiVersion?: string; kind?: string; uid?: string }> };
  status?: { phase?: string };
}

let sandbox: Sandbox;
let clients: KubeClients;
let kubeconfig: string;
let metricServer: Server;
let metricUrl = '';
const prefixes: string[] = [];
const running: RunningProcess[] = [];

/** A Rollgate process (reconciler role) on the sandbox driving `groups`, under its own Redis prefix. */
async function startRollgate(groups: string[], clock: Clock = systemClock): Promise<RunningProcess> {
  const prefix = `rg-ctl-${randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix },
    server: { host: '127.0.0.1', port: 0 },
    controller: { groups },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    clock,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  try {
    const process = await startProcess(runtime, {
      role: 'reconciler',
      metrics: createRollgateMetrics({ processMetrics: false }),
      // A refused start must fail at once, not retry: the refusal is not transient.
      startRetry: { sleep: () => Promise.resolve() },
    });
    running.push(process);
    return process;
  } catch (err) {
    await runtime.close();
    throw err;
  }
}

async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((p) => p.stop()));
}

function rolloutBody(apiVersion: string, name: string, app: string, steps: unknown[]) {
  return {
    apiVersion,
    kind: 'Rollout',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: 'app', image: `shop/${app}:1` }] },
      },
      strategy: { canary: { steps } },
    },
  };
}

async function create(group: string, plural: string, body: object): Promise<void> {
  await clients.custom.createNamespacedCustomObject({
    group,
    version: 'v1alpha1',
    namespace: NAMESPACE,
    plural,
    body,
  });
}

async function read(group: string, name: string): Promise<Live | undefined> {
  try {
    return toPlainObject<Live>(
      await clients.custom.getNamespacedCustomObject({
        group,
        version: 'v1alpha1',
        namespace: NAMESPACE,
        plural: 'rollouts',
        name,
      }),
    );
  } catch {
    return undefined;
  }
}

async function setImage(group: string, name: string, image: string): Promise<void> {
  await clients.custom.patchNamespacedCustomObject({
    group,
    version: 'v1alpha1',
    namespace: NAMESPACE,
    plural: 'rollouts',
    name,
    body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
  });
}

async function runs(group: string): Promise<Run[]> {
  const list = toPlainObject<{ items: Run[] }>(
    await clients.custom.listNamespacedCustomObject({
      group,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
    }),
  );
  return list.items;
}

const pausedAt = (group: string, name: string, step: number) =>
  eventually(
    `${group} ${name} paused at step ${step}`,
    async () => {
      const live = await read(group, name);
      const s = live?.status;
      return s?.phase === 'Paused' && s.currentStepIndex === step && (s.pauseConditions ?? []).length > 0
        ? live
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );

const healthyAt = (group: string, name: string, hashNot?: string) =>
  eventually(
    `${group} ${name} Healthy`,
    async () => {
      const live = await read(group, name);
      const s = live?.status;
      return s?.phase === 'Healthy' && s.stableRS === s.currentPodHash && s.currentPodHash !== hashNot
        ? live
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );

async function putLease(renewTime: Date): Promise<void> {
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: LEASE, namespace: ARGO_NAMESPACE },
    spec: {
      holderIdentity: 'argo-rollouts-6c9b8f7d4-x2x9z',
      leaseDurationSeconds: 15,
      renewTime: renewTime.toISOString().replace('Z', '000Z'),
    },
  };
  await clients.custom
    .deleteNamespacedCustomObject({
      group: 'coordination.k8s.io',
      version: 'v1',
      namespace: ARGO_NAMESPACE,
      plural: 'leases',
      name: LEASE,
    })
    .catch(() => undefined);
  await clients.custom.createNamespacedCustomObject({
    group: 'coordination.k8s.io',
    version: 'v1',
    namespace: ARGO_NAMESPACE,
    plural: 'leases',
    body,
  });
}

/** Argo's own Rollout CRD as a cluster with Argo Rollouts holds it (its schema abridged, its labels Argo's). */
const ARGO_ROLLOUT_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: 'rollouts.argoproj.io',
    labels: { 'app.kubernetes.io/name': 'argo-rollouts', 'app.kubernetes.io/part-of': 'argo-rollouts' },
    annotations: { 'controller-gen.kubebuilder.io/version': 'v0.16.5' },
  },
  spec: {
    group: 'argoproj.io',
    names: {
      kind: 'Rollout',
      listKind: 'RolloutList',
      plural: 'rollouts',
      singular: 'rollout',
      shortNames: ['ro'],
    },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.replicas',
            statusReplicasPath: '.status.HPAReplicas',
            labelSelectorPath: '.status.selector',
          },
        },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

async function readCrd(name: string): Promise<Record<string, unknown> | undefined> {
  try {
    return (await clients.custom.getClusterCustomObject({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      name,
    })) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  sandbox = await startSandbox({ readyDelayMs: 50 });
  kubeconfig = join(mkdtempSync(join(tmpdir(), 'rollgate-ctl-')), 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  clients = createKubeClients(sandbox.kubeConfig);
  await clients.core.createNamespace({ body: { metadata: { name: ARGO_NAMESPACE } } });
  // Argo's Rollout CRD is there before Rollgate (the cluster ran Argo Rollouts); the other three are not.
  // Through the untyped client: the typed one would drop the x-kubernetes-* fields of the schema.
  await clients.custom.createClusterCustomObject({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    body: ARGO_ROLLOUT_CRD,
  });
  metricServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rate: 0.99 }));
  });
  await new Promise<void>((resolve) => metricServer.listen(0, '127.0.0.1', resolve));
  const address = metricServer.address();
  metricUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/rate`;
}, 60_000);

afterAll(async () => {
  await stopAll();
  const redis = createRedisConnection(inject('redisUrl'));
  for (const prefix of prefixes) {
    await deleteKeysUnder(redis, prefix);
    await deleteKeysUnder(redis, `${prefix}.argoproj.io`);
  }
  redis.disconnect();
  await new Promise<void>((resolve) => metricServer?.close(() => resolve()));
  await sandbox?.stop();
});

describe('controller mode (controller.groups: [argoproj.io])', () => {
  it('refuses to start while the Argo Rollouts controller holds and renews its Lease, naming it', async () => {
    const clock = new ManualClock(new Date('2026-12-04T14:00:00Z'));
    await putLease(new Date(clock.now().getTime() - 5_000));
    const refused = await startRollgate(['argoproj.io'], clock).then(
      () => undefined,
      (err: unknown) => err as { code?: string; message?: string },
    );
    expect(refused?.code).toBe('controller.argo_rollouts_running');
    expect(refused?.message).toContain(
      `Lease ${ARGO_NAMESPACE}/${LEASE} is held by "argo-rollouts-6c9b8f7d4-x2x9z"`,
    );
    expect(refused?.message).toContain('docs/migrating-from-argo-rollouts.md');
  });

  it("starts once the Lease has expired, and leaves Argo's existing CRD as it was", async () => {
    const before = await readCrd('rollouts.argoproj.io');
    const clock = new ManualClock(new Date('2026-12-04T14:00:00Z'));
    // Renewed 20 s ago with a 15 s lease: the controller stopped (scaled to 0), the Lease is stale.
    await putLease(new Date(clock.now().getTime() - 20_000));
    await startRollgate(['argoproj.io'], clock);
    await stopAll();
    // Byte for byte: same JSON, same resourceVersion (nothing was written to it).
    expect(JSON.stringify(await readCrd('rollouts.argoproj.io'))).toBe(JSON.stringify(before));
    // The absent ones were created in Argo's group.
    for (const plural of ['analysistemplates', 'clusteranalysistemplates', 'analysisruns'])
      expect((await readCrd(`${plural}.argoproj.io`))?.spec).toMatchObject({ group: 'argoproj.io' });
    // Argo Rollouts is gone for the tests below (they run on the real clock).
    await clients.custom.deleteNamespacedCustomObject({
      group: 'coordination.k8s.io',
      version: 'v1',
      namespace: ARGO_NAMESPACE,
      plural: 'leases',
      name: LEASE,
    });
  });

  it("drives a kubectl-applied argoproj.io canary to its pause; the CLI promotes it; it ends Healthy in Argo's status shape", async () => {
    await startRollgate(['argoproj.io']);
    await create('argoproj.io', 'analysistemplates', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisTemplate',
      metadata: { name: 'success-rate', namespace: NAMESPACE },
      spec: {
        metrics: [
          {
            name: 'rate',
            count: 1,
            successCondition: 'result >= 0.95',
            provider: { web: { url: metricUrl, jsonPath: '{$.rate}' } },
          },
        ],
      },
    });
    const steps = [
      { setWeight: 25 },
      { pause: {} },
      { analysis: { templates: [{ templateName: 'success-rate' }] } },
      { setWeight: 75 },
      { pause: { duration: '1s' } },
    ];
    await create('argoproj.io', 'rollouts', rolloutBody('argoproj.io/v1alpha1', 'web', 'web', steps));
    const first = await healthyAt('argoproj.io', 'web');
    const firstHash = first.status!.stableRS!;

    await setImage('argoproj.io', 'web', 'shop/web:2');
    const paused = await pausedAt('argoproj.io', 'web', 1);
    expect(paused.status?.currentPodHash).not.toBe(firstHash);
    expect(paused.status?.canary?.weights?.canary?.weight).toBe(25);
    expect(paused.status?.canary?.weights?.stable?.weight).toBe(75);

    const promoted = await runCli('promote', 'web', '-n', NAMESPACE, '--kubeconfig', kubeconfig);
    expect(promoted.stderr).toBe('');
    expect(promoted.stdout).toContain('rollout web promoted');

    const healthy = await healthyAt('argoproj.io', 'web', firstHash);
    const status = healthy.status!;
    expect(status.currentStepIndex).toBe(steps.length);
    expect(status.canary?.weights?.canary?.weight ?? 0).toBe(0);
    expect(String(status.observedGeneration)).toBe(String(healthy.metadata.generation));

    // Its ReplicaSets are owned by the argoproj.io Rollout.
    const replicaSets = await clients.apps.listNamespacedReplicaSet({
      namespace: NAMESPACE,
      labelSelector: 'app=web',
    });
    expect(replicaSets.items.length).toBeGreaterThan(0);
    for (const rs of replicaSets.items)
      expect(rs.metadata?.ownerReferences?.[0]).toMatchObject({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        uid: healthy.metadata.uid,
      });
    // The analysis step ran as an argoproj.io AnalysisRun owned by the Rollout (and passed: the canary
    // went on past it), and nothing in Rollgate's group.
    const argoRuns = await runs('argoproj.io');
    expect(argoRuns).toHaveLength(1);
    for (const run of argoRuns) {
      expect(run.apiVersion).toBe('argoproj.io/v1alpha1');
      expect(run.metadata.ownerReferences?.[0]).toMatchObject({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        uid: healthy.metadata.uid,
      });
    }
    expect(argoRuns[0]?.status?.phase).toBe('Successful');
    expect(await runs('rollgate.dev').catch(() => [])).toEqual([]);
    await stopAll();
  }, 90_000);

  it('a process driving both groups drives a rollgate.dev and an argoproj.io Rollout of the same name independently', async () => {
    await startRollgate(['rollgate.dev', 'argoproj.io']);
    const steps = [{ setWeight: 50 }, { pause: {} }];
    // Same namespace/name, different pods (each group's Rollout has its own selector and template).
    await create('rollgate.dev', 'rollouts', rolloutBody('rollgate.dev/v1alpha1', 'twin', 'twin-rg', steps));
    await create('argoproj.io', 'rollouts', rolloutBody('argoproj.io/v1alpha1', 'twin', 'twin-argo', steps));
    const rgFirst = await healthyAt('rollgate.dev', 'twin');
    const argoFirst = await healthyAt('argoproj.io', 'twin');

    // Only the argoproj.io one gets a new revision: it pauses, the rollgate.dev one stays Healthy.
    await setImage('argoproj.io', 'twin', 'shop/twin-argo:2');
    await pausedAt('argoproj.io', 'twin', 1);
    const rgNow = await read('rollgate.dev', 'twin');
    expect(rgNow?.status?.phase).toBe('Healthy');
    expect(rgNow?.status?.stableRS).toBe(rgFirst.status?.stableRS);

    // The CLI needs the group when the name is in both.
    const ambiguous = await runCli('promote', 'twin', '-n', NAMESPACE, '--kubeconfig', kubeconfig);
    expect(ambiguous.code).not.toBe(0);
    expect(ambiguous.stderr).toContain('--group');
    const promoted = await runCli(
      'promote',
      'twin',
      '--group',
      'argoproj.io',
      '-n',
      NAMESPACE,
      '--kubeconfig',
      kubeconfig,
    );
    expect(promoted.stdout).toContain('rollout twin promoted');
    const argoDone = await healthyAt('argoproj.io', 'twin', argoFirst.status?.stableRS);

    // Each group's ReplicaSets are owned by its own Rollout.
    const owners = async (app: string) =>
      (
        await clients.apps.listNamespacedReplicaSet({ namespace: NAMESPACE, labelSelector: `app=${app}` })
      ).items.map((rs) => rs.metadata?.ownerReferences?.[0]?.uid);
    expect(new Set(await owners('twin-rg'))).toEqual(new Set([rgFirst.metadata.uid]));
    expect(new Set(await owners('twin-argo'))).toEqual(new Set([argoDone.metadata.uid]));
    expect((await read('rollgate.dev', 'twin'))?.status?.stableRS).toBe(rgFirst.status?.stableRS);
    await stopAll();
  }, 90_000);
});
