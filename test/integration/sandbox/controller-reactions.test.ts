// The controllers look only at what a write changed: each change below reaches the controller that must
// react (through the pod's owner, the pod's previous owner, a deleted owner's dependents), among neighbours
// that must stay untouched.
import { AppsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';

let sandbox: Sandbox;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeEach(async () => {
  sandbox = await startSandbox({ clock: new ManualClock(Date.UTC(2026, 0, 1)), readyDelayMs: 1000 });
  core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
  apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
  for (const name of ['web', 'neighbour']) {
    await apps.createNamespacedReplicaSet({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
          },
        },
      },
    });
  }
  await sandbox.advance(1000);
});
afterEach(async () => {
  await sandbox.stop();
});

async function podsOf(name: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items;
}

async function versionsOf(name: string): Promise<string[]> {
  return (await podsOf(name)).map((p) => `${p.metadata?.name ?? ''}@${p.metadata?.resourceVersion ?? ''}`);
}

describe('controllers react to the object changed', () => {
  it('replaces a pod deleted at once, and leaves the neighbour as it was', async () => {
    const neighbour = await versionsOf('neighbour');
    const [victim] = await podsOf('web');
    await core.deleteNamespacedPod({
      name: victim?.metadata?.name ?? '',
      namespace: 'default',
      gracePeriodSeconds: 0,
    });
    await sandbox.settle();
    const pods = await podsOf('web');
    expect(pods).toHaveLength(2);
    expect(pods.map((p) => p.metadata?.name)).not.toContain(victim?.metadata?.name);
    await sandbox.advance(1000);
    const rs = await apps.readNamespacedReplicaSet({ name: 'web', namespace: 'default' });
    expect(rs.status).toMatchObject({ replicas: 2, readyReplicas: 2 });
    expect(await versionsOf('neighbour')).toEqual(neighbour);
  });

  it('counts out a pod whose ownerReference is removed and creates one in its place', async () => {
    const [orphan] = await podsOf('web');
    await core.patchNamespacedPod({
      name: orphan?.metadata?.name ?? '',
      namespace: 'default',
      body: [
        { op: 'remove', path: '/metadata/ownerReferences' },
        { op: 'replace', path: '/metadata/labels/app', value: 'orphaned' },
      ],
    });
    await sandbox.settle();
    expect(await podsOf('web')).toHaveLength(2);
    expect(await podsOf('orphaned')).toHaveLength(1);
  });

  it("deletes a ReplicaSet's pods once it is gone, and only its pods", async () => {
    const neighbour = await versionsOf('neighbour');
    await apps.deleteNamespacedReplicaSet({ name: 'web', namespace: 'default' });
    await sandbox.settle();
    const terminating = await podsOf('web');
    expect(terminating.every((p) => p.metadata?.deletionTimestamp !== undefined)).toBe(true);
    await sandbox.advance(1000);
    expect(await podsOf('web')).toEqual([]);
    expect(await versionsOf('neighbour')).toEqual(neighbour);
  });
});
