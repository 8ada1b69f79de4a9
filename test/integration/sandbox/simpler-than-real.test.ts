// Where the sandbox is simpler than kube-apiserver 1.20 on purpose (docs/sandbox.md, "Real API server"):
// these tests pin each difference, so a change to it is a decision, not an accident.
import { CoreV1Api, KubernetesObjectApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ readyDelayMs: 50 });
});
afterAll(async () => {
  await sandbox.stop();
});

describe('the sandbox, simpler than kube-apiserver 1.20', () => {
  it('server-side applies a Service whose port omits protocol (1.20 answers 500 every time; refuseWrites injects that)', async () => {
    const objects = KubernetesObjectApi.makeApiClient(sandbox.kubeConfig);
    const applied = await objects.patch(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'no-protocol', namespace: 'default' },
        spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      },
      undefined,
      undefined,
      'rollgate',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((applied as { spec?: { ports?: Array<{ protocol?: string }> } }).spec?.ports?.[0]?.protocol).toBe(
      'TCP',
    );
  });

  it('deletes in the foreground by waiting for every dependent, blockOwnerDeletion or not (1.20 waits only for blocking ones)', async () => {
    const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    const namespace = 'default';
    const owner = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'fg-owner' } },
    });
    // A dependent that does not block its owner's deletion, held by a finalizer of its own.
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'fg-dependent',
          finalizers: ['example.com/hold'],
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'fg-owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: 'fg-owner', propagationPolicy: 'Foreground' });
    await eventually('the dependent deleted in turn', async () => {
      const dependent = await core.readNamespacedConfigMap({ namespace, name: 'fg-dependent' });
      return dependent.metadata?.deletionTimestamp !== undefined;
    });
    // kube-apiserver 1.20's garbage collector has let the owner go by now (test/real-apiserver/foreground-deletion).
    const waiting = await core.readNamespacedConfigMap({ namespace, name: 'fg-owner' });
    expect(waiting.metadata?.finalizers).toEqual(['foregroundDeletion']);

    await core.patchNamespacedConfigMap(
      { namespace, name: 'fg-dependent', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await eventually('both gone', async () => {
      const left = await core.listNamespacedConfigMap({ namespace });
      return !left.items.some((cm) => cm.metadata?.name?.startsWith('fg-'));
    });
  });
});
