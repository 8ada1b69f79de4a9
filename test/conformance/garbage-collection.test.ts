// Conformance: ownerReferences garbage collection (background, foreground, orphan), finalizers and namespace deletion.
import { describe, expect, it } from 'vitest';
import { configMap, failure, replicaSet } from './support/conformance-cluster.ts';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';
import { recordWatch } from './support/watch-recorder.ts';

const cluster = useConformanceCluster();

async function ownerWithDependent(
  name: string,
  options: { blockOwnerDeletion?: boolean } = {},
): Promise<void> {
  const owner = await cluster.objects.create(configMap(name, cluster.namespace));
  await cluster.objects.create({
    ...configMap(`${name}-dep`, cluster.namespace),
    metadata: {
      name: `${name}-dep`,
      namespace: cluster.namespace,
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name,
          uid: owner.metadata?.uid ?? '',
          ...(options.blockOwnerDeletion ? { blockOwnerDeletion: true } : {}),
        },
      ],
    },
  });
}

const exists = async (name: string): Promise<boolean> =>
  cluster.core
    .readNamespacedConfigMap({ name, namespace: cluster.namespace })
    .then(() => true)
    .catch((err: { code?: number }) => {
      if (err.code === 404) return false;
      throw err;
    });

describe('garbage collection', () => {
  it('deletes dependents in the background once the owner is gone', async () => {
    await ownerWithDependent('gc-bg');
    await cluster.core.deleteNamespacedConfigMap({ name: 'gc-bg', namespace: cluster.namespace });
    expect(await exists('gc-bg')).toBe(false);
    await cluster.eventually(async () => ((await exists('gc-bg-dep')) ? undefined : true));
  });

  it('keeps dependents and drops their ownerReference with propagationPolicy=Orphan', async () => {
    await ownerWithDependent('gc-orphan');
    await cluster.core.deleteNamespacedConfigMap({
      name: 'gc-orphan',
      namespace: cluster.namespace,
      propagationPolicy: 'Orphan',
    });
    const dep = await cluster.eventually(async () => {
      const cm = await cluster.core.readNamespacedConfigMap({
        name: 'gc-orphan-dep',
        namespace: cluster.namespace,
      });
      return (cm.metadata?.ownerReferences ?? []).length === 0 ? cm : undefined;
    });
    expect(dep.metadata?.name).toBe('gc-orphan-dep');
  });

  it('deletes dependents before the owner with propagationPolicy=Foreground', async () => {
    // A foreground deletion waits only for dependents that block it: without blockOwnerDeletion the real
    // garbage collector may remove the owner first (the sandbox waits for every dependent).
    await ownerWithDependent('gc-fg', { blockOwnerDeletion: true });
    const watch = await recordWatch(
      cluster.kubeConfig,
      `/api/v1/namespaces/${cluster.namespace}/configmaps`,
      {},
    );
    await cluster.core.deleteNamespacedConfigMap({
      name: 'gc-fg',
      namespace: cluster.namespace,
      propagationPolicy: 'Foreground',
    });
    await cluster.eventually(async () =>
      (await exists('gc-fg')) || (await exists('gc-fg-dep')) ? undefined : true,
    );
    const events = await watch.until((seen) =>
      seen.some((e) => e.type === 'DELETED' && e.object.metadata?.name === 'gc-fg'),
    );
    watch.stop();
    const deleted = events
      .filter((e) => e.type === 'DELETED' && e.object.metadata?.name?.startsWith('gc-fg'))
      .map((e) => e.object.metadata?.name);
    expect(deleted).toEqual(['gc-fg-dep', 'gc-fg']);
  });

  it('deletes the pods of a deleted ReplicaSet', async () => {
    await cluster.objects.create(replicaSet('gc-rs', cluster.namespace, 2));
    await cluster.eventually(async () => {
      const pods = await cluster.core.listNamespacedPod({
        namespace: cluster.namespace,
        labelSelector: 'app=gc-rs',
      });
      return pods.items.length === 2 ? true : undefined;
    });
    await cluster.apps.deleteNamespacedReplicaSet({ name: 'gc-rs', namespace: cluster.namespace });
    await cluster.eventually(async () => {
      const pods = await cluster.core.listNamespacedPod({
        namespace: cluster.namespace,
        labelSelector: 'app=gc-rs',
      });
      return pods.items.filter((p) => !p.metadata?.deletionTimestamp).length === 0 ? true : undefined;
    }, 60_000);
  });
});

describe('finalizers', () => {
  it('marks deletionTimestamp and keeps the object until the last finalizer is removed', async () => {
    await cluster.objects.create({
      ...configMap('fin', cluster.namespace),
      metadata: { name: 'fin', namespace: cluster.namespace, finalizers: ['rollgate.dev/test'] },
    });
    await cluster.core.deleteNamespacedConfigMap({ name: 'fin', namespace: cluster.namespace });
    const terminating = await cluster.core.readNamespacedConfigMap({
      name: 'fin',
      namespace: cluster.namespace,
    });
    expect(terminating.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await cluster.core.patchNamespacedConfigMap({
      name: 'fin',
      namespace: cluster.namespace,
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
    });
    expect(await exists('fin')).toBe(false);
  });
});

describe('namespaces', () => {
  it('deletes a namespace with its objects', async () => {
    const name = `${cluster.namespace}-x`;
    await cluster.core.createNamespace({ body: { metadata: { name } } });
    await cluster.core.createNamespacedConfigMap({ namespace: name, body: { metadata: { name: 'inside' } } });
    await cluster.core.deleteNamespace({ name });
    await cluster.eventually(async () => {
      const gone = await cluster.core.readNamespace({ name }).then(
        () => false,
        (err: { code?: number }) => err.code === 404,
      );
      return gone ? true : undefined;
    }, 60_000);
    const { code } = await failure(cluster.core.readNamespacedConfigMap({ name: 'inside', namespace: name }));
    expect(code).toBe(404);
  });

  it('refuses objects in a namespace that does not exist', async () => {
    const { code, status } = await failure(
      cluster.core.createNamespacedConfigMap({
        namespace: `${cluster.namespace}-absent`,
        body: { metadata: { name: 'x' } },
      }),
    );
    expect(code).toBe(404);
    expect(status.message).toBe(`namespaces "${cluster.namespace}-absent" not found`);
  });
});
