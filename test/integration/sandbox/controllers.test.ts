// The sandbox's controllers on a ManualClock: ReplicaSets, kubelet behaviours and Jobs, advanced without sleeping.
import { AppsV1Api, BatchV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { sandboxJobSpec } from '../../support/sandbox-job.ts';

let clock: ManualClock;
let sandbox: Sandbox;
let core: CoreV1Api;
let apps: AppsV1Api;
let batch: BatchV1Api;

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 0, 1));
  sandbox = await startSandbox({ clock, readyDelayMs: 1000, missingImages: ['registry.example/missing:*'] });
  core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
  apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
  batch = sandbox.kubeConfig.makeApiClient(BatchV1Api);
});
afterEach(async () => {
  await sandbox.stop();
});

async function createReplicaSet(
  name: string,
  replicas: number,
  image = 'nginx:1.27',
  annotations: Record<string, string> = {},
): Promise<void> {
  await apps.createNamespacedReplicaSet({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name }, annotations },
          spec: { containers: [{ name: 'app', image }] },
        },
      },
    },
  });
}

async function podsOf(name: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items;
}

const ready = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

describe('ReplicaSet controller and kubelet', () => {
  it('creates owned pods from generateName and makes them Ready after the ready delay', async () => {
    await createReplicaSet('web', 3);
    await sandbox.settle();
    const pods = await podsOf('web');
    expect(pods).toHaveLength(3);
    for (const pod of pods) {
      expect(pod.metadata?.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'ReplicaSet',
        name: 'web',
        controller: true,
      });
    }
    expect(pods.filter(ready)).toHaveLength(0);
    await sandbox.advance(1000);
    expect((await podsOf('web')).filter(ready)).toHaveLength(3);
    const rs = await apps.readNamespacedReplicaSet({ name: 'web', namespace: 'default' });
    expect(rs.status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=web',
    });
    const created = events.items.filter((e) => e.reason === 'SuccessfulCreate').map((e) => e.message ?? '');
    expect(created).toHaveLength(3);
    for (const message of created) expect(message).toMatch(/^Created pod: web-[a-z0-9]{5}$/);
  });

  it('scales down when replicas are lowered', async () => {
    await createReplicaSet('scale', 3);
    await sandbox.advance(1000);
    await apps.patchNamespacedReplicaSet({
      name: 'scale',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/replicas', value: 1 }],
    });
    await sandbox.settle();
    const terminating = (await podsOf('scale')).filter((p) => p.metadata?.deletionTimestamp !== undefined);
    expect(terminating).toHaveLength(2);
    await sandbox.advance(1000);
    expect(await podsOf('scale')).toHaveLength(1);
    const rs = await apps.readNamespacedReplicaSet({ name: 'scale', namespace: 'default' });
    expect(rs.status?.replicas).toBe(1);
  });

  it('does not churn resourceVersions once settled', async () => {
    await createReplicaSet('quiet', 2);
    await sandbox.advance(5000);
    const before = (await apps.readNamespacedReplicaSet({ name: 'quiet', namespace: 'default' })).metadata
      ?.resourceVersion;
    await sandbox.advance(60_000);
    const after = (await apps.readNamespacedReplicaSet({ name: 'quiet', namespace: 'default' })).metadata
      ?.resourceVersion;
    expect(after).toBe(before);
  });

  it('reports ImagePullBackOff naming the image for a missing image', async () => {
    await createReplicaSet('pull', 1, 'registry.example/missing:9.9');
    await sandbox.advance(30_000);
    const [pod] = await podsOf('pull');
    const waiting = pod?.status?.containerStatuses?.[0]?.state?.waiting;
    expect(waiting?.reason).toBe('ImagePullBackOff');
    expect(waiting?.message).toContain('registry.example/missing:9.9');
    expect(ready(pod as V1Pod)).toBe(false);
  });

  it('crash-loops a pod that asks for it, with a growing restartCount', async () => {
    await createReplicaSet('crash', 1, 'nginx:1.27', { 'sandbox.rollgate.dev/behavior': 'crash-loop' });
    await sandbox.advance(120_000);
    const [pod] = await podsOf('crash');
    const status = pod?.status?.containerStatuses?.[0];
    expect(status?.restartCount).toBeGreaterThan(1);
  });
});

describe('Job controller', () => {
  async function createJob(name: string, result: 'succeed' | 'fail'): Promise<void> {
    await batch.createNamespacedJob({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: sandboxJobSpec(result),
      },
    });
  }

  it('runs a Job to Complete', async () => {
    await createJob('ok', 'succeed');
    await sandbox.advance(60_000);
    const job = await batch.readNamespacedJob({ name: 'ok', namespace: 'default' });
    expect(job.status?.succeeded).toBe(1);
    expect(job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')).toBe(true);
  });

  it('runs a failing Job to Failed', async () => {
    await createJob('bad', 'fail');
    await sandbox.advance(60_000);
    const job = await batch.readNamespacedJob({ name: 'bad', namespace: 'default' });
    expect(job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True')).toBe(true);
  });
});
