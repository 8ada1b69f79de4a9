// Foreground deletion on kube-apiserver 1.20: the owner waits only for dependents whose ownerReference
// says blockOwnerDeletion; the sandbox waits for every dependent (pinned in
// test/integration/sandbox/simpler-than-real.test.ts; docs/sandbox.md says why that is harmless here).
import { PatchStrategy, setHeaderOptions, type V1OwnerReference } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { connectRealCluster, createTestNamespace, type RealCluster } from './support/real-cluster.ts';

let cluster: RealCluster;
let namespace: { name: string; remove(): Promise<void> };
beforeAll(async () => {
  cluster = connectRealCluster();
  namespace = await createTestNamespace(cluster, 'rollgate-fg');
});
afterAll(async () => {
  await namespace?.remove();
});

const gone = (name: string) => () =>
  cluster.clients.core.readNamespacedConfigMap({ namespace: namespace.name, name }).then(
    () => false,
    () => true,
  );

/** An owner and one dependent held by a finalizer of its own; the owner deleted in the foreground. */
async function deleteOwnerOf(prefix: string, blockOwnerDeletion: boolean): Promise<void> {
  const core = cluster.clients.core;
  const ns = namespace.name;
  const owner = await core.createNamespacedConfigMap({
    namespace: ns,
    body: { metadata: { name: `${prefix}-owner` } },
  });
  const ref: V1OwnerReference = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: `${prefix}-owner`,
    uid: owner.metadata?.uid ?? '',
    blockOwnerDeletion,
  };
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: {
      metadata: { name: `${prefix}-dependent`, finalizers: ['example.com/hold'], ownerReferences: [ref] },
    },
  });
  await core.deleteNamespacedConfigMap({
    namespace: ns,
    name: `${prefix}-owner`,
    propagationPolicy: 'Foreground',
  });
  await eventually(
    `${prefix}: the dependent deleted in turn`,
    async () =>
      (await core.readNamespacedConfigMap({ namespace: ns, name: `${prefix}-dependent` })).metadata
        ?.deletionTimestamp !== undefined,
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

const release = (name: string) =>
  cluster.clients.core.patchNamespacedConfigMap(
    { namespace: namespace.name, name, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );

describe('foreground deletion on kube-apiserver 1.20', () => {
  it('lets the owner go while a dependent without blockOwnerDeletion is still terminating', async () => {
    await deleteOwnerOf('loose', false);
    await eventually('the owner gone', gone('loose-owner'), { timeoutMs: 30_000, intervalMs: 200 });
    const dependent = await cluster.clients.core.readNamespacedConfigMap({
      namespace: namespace.name,
      name: 'loose-dependent',
    });
    expect(dependent.metadata?.deletionTimestamp).toBeDefined();
    await release('loose-dependent');
    await eventually('the dependent gone', gone('loose-dependent'), { timeoutMs: 30_000, intervalMs: 200 });
  });

  it('keeps the owner, as the sandbox does, while a blocking dependent is terminating', async () => {
    await deleteOwnerOf('tight', true);
    const owner = await cluster.clients.core.readNamespacedConfigMap({
      namespace: namespace.name,
      name: 'tight-owner',
    });
    expect(owner.metadata?.finalizers).toEqual(['foregroundDeletion']);
    await release('tight-dependent');
    await eventually(
      'both gone',
      async () => (await gone('tight-owner')()) && (await gone('tight-dependent')()),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
      },
    );
  });
});
