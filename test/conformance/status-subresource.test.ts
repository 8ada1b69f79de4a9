// Conformance: the /status subresource only changes status; the main resource ignores status.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';

const cluster = useConformanceCluster();
let crdName: string;
let group: string;
beforeAll(async () => {
  group = `${cluster.unique('conf')}.rollgate.dev`;
  crdName = `gadgets.${group}`;
  await cluster.objects.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
          },
          // client-node's typed create serializes this by the model's property name, not the JSON key.
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
        },
      ],
    },
  } as never);
  await cluster.eventually(async () => {
    const crd = (await cluster.objects.read({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
    })) as {
      status?: { conditions?: Array<{ type: string; status: string }> };
    };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
      ? true
      : undefined;
  });
});
afterAll(async () => {
  await cluster.objects
    .delete({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
    })
    .catch(() => undefined);
});

/** Where the gadgets of this file's namespace live, for the custom-objects client. */
const gadgets = () => ({ group, version: 'v1', namespace: cluster.namespace, plural: 'gadgets' });
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const gadget = (name: string) => ({
  apiVersion: `${group}/v1`,
  kind: 'Gadget',
  metadata: { name, namespace: cluster.namespace },
  spec: { size: 1 },
  status: { phase: 'FromCreate' },
});

describe('status subresource of a custom resource', () => {
  it('runs on a CRD that stored x-kubernetes-preserve-unknown-fields (else spec and status are pruned)', async () => {
    // client-node's typed serializer drops a dashed `x-kubernetes-*` key on the way in (its model knows
    // only `x_kubernetes_preserve_unknown_fields`), and a real API server then prunes every field of a
    // gadget: the tests below would fail there for a reason the sandbox never shows. Read untyped, so
    // this sees the JSON key the server stored.
    const raw = (await cluster.custom.getClusterCustomObject({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      name: crdName,
    })) as { spec: { versions: Array<{ schema?: { openAPIV3Schema?: Record<string, unknown> } }> } };
    expect(raw.spec.versions[0]?.schema?.openAPIV3Schema).toMatchObject({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });

  it('drops status sent on create', async () => {
    const created = (await cluster.custom.createNamespacedCustomObject({
      ...gadgets(),
      body: gadget('g1'),
    })) as { status?: unknown; metadata: { generation: number } };
    expect(created.status).toBeUndefined();
    expect(created.metadata.generation).toBe(1);
  });

  it('changes only status through /status, without bumping generation', async () => {
    const updated = (await cluster.custom.patchNamespacedCustomObjectStatus(
      { ...gadgets(), name: 'g1', body: { spec: { size: 99 }, status: { phase: 'Ready' } } },
      MERGE_PATCH,
    )) as { spec: { size: number }; status: { phase: string }; metadata: { generation: number } };
    expect(updated.status.phase).toBe('Ready');
    expect(updated.spec.size).toBe(1);
    expect(updated.metadata.generation).toBe(1);
  });

  it('ignores status in writes to the main resource and bumps generation for spec', async () => {
    const updated = (await cluster.custom.patchNamespacedCustomObject(
      { ...gadgets(), name: 'g1', body: { spec: { size: 2 }, status: { phase: 'Hacked' } } },
      MERGE_PATCH,
    )) as { spec: { size: number }; status: { phase: string }; metadata: { generation: number } };
    expect(updated.spec.size).toBe(2);
    expect(updated.status.phase).toBe('Ready');
    expect(updated.metadata.generation).toBe(2);
  });

  it('requires a resourceVersion to replace a custom resource', async () => {
    const live = (await cluster.custom.getNamespacedCustomObject({ ...gadgets(), name: 'g1' })) as {
      metadata: Record<string, unknown>;
    };
    delete live.metadata.resourceVersion;
    await expect(
      cluster.custom.replaceNamespacedCustomObject({ ...gadgets(), name: 'g1', body: live }),
    ).rejects.toMatchObject({ code: 422 });
  });
});

describe('status subresource of a built-in kind', () => {
  it('keeps ReplicaSet status when the main resource is replaced with a different status', async () => {
    await cluster.apps.createNamespacedReplicaSet({
      namespace: cluster.namespace,
      body: {
        metadata: { name: 'rs-status' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'rs-status' } },
          template: {
            metadata: { labels: { app: 'rs-status' } },
            spec: { containers: [{ name: 'a', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    const settled = await cluster.eventually(async () => {
      const rs = await cluster.apps.readNamespacedReplicaSet({
        name: 'rs-status',
        namespace: cluster.namespace,
      });
      return rs.status?.observedGeneration === 1 ? rs : undefined;
    });
    const replaced = await cluster.apps.replaceNamespacedReplicaSet({
      name: 'rs-status',
      namespace: cluster.namespace,
      body: { ...settled, status: { replicas: 42 } },
    });
    expect(replaced.status?.replicas).toBe(0);
  });
});

describe('scale subresource of a custom resource', () => {
  it('reads and writes spec replicas through /scale', async () => {
    await cluster.custom.createNamespacedCustomObject({
      ...gadgets(),
      body: { ...gadget('scaled'), spec: { replicas: 2 } },
    });
    const before = (await cluster.custom.getNamespacedCustomObjectScale({
      ...gadgets(),
      name: 'scaled',
    })) as { kind: string; spec: { replicas: number } };
    expect(before).toMatchObject({ kind: 'Scale', spec: { replicas: 2 } });
    await cluster.custom.patchNamespacedCustomObjectScale(
      { ...gadgets(), name: 'scaled', body: { spec: { replicas: 5 } } },
      MERGE_PATCH,
    );
    const live = (await cluster.custom.getNamespacedCustomObject({
      ...gadgets(),
      name: 'scaled',
    })) as { spec: { replicas: number } };
    expect(live.spec.replicas).toBe(5);
  });
});
