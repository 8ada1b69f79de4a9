// Conformance: merge, strategic merge, JSON patch and server-side apply (managers, conflicts, force).
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { configMap, failure, replicaSet } from './support/conformance-cluster.ts';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';

const cluster = useConformanceCluster();

type Container = { name: string; image: string; env?: Array<{ name: string; value: string }> };
const containersOf = (obj: unknown): Container[] =>
  (obj as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers;

describe('merge patch (RFC 7386)', () => {
  it('merges maps and deletes keys set to null', async () => {
    await cluster.objects.create(configMap('merge', cluster.namespace, { keep: '1', drop: '2' }));
    const patched = await cluster.objects.patch(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'merge', namespace: cluster.namespace },
        data: { drop: null, add: '3' },
      } as never,
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    expect((patched as { data: Record<string, string> }).data).toEqual({ keep: '1', add: '3' });
  });

  it('replaces lists whole', async () => {
    await cluster.objects.create(replicaSet('merge-list', cluster.namespace, 0));
    const patched = await cluster.apps.patchNamespacedReplicaSet(
      {
        name: 'merge-list',
        namespace: cluster.namespace,
        body: { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1.36' }] } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(containersOf(patched).map((c) => c.name)).toEqual(['sidecar']);
  });

  it('answers 409 when the patch carries a stale resourceVersion', async () => {
    await cluster.objects.create(configMap('merge-rv', cluster.namespace, { a: '1' }));
    const { code, status } = await failure(
      cluster.core.patchNamespacedConfigMap(
        {
          name: 'merge-rv',
          namespace: cluster.namespace,
          body: { metadata: { resourceVersion: '1' }, data: { a: '2' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(code).toBe(409);
    expect(status.reason).toBe('Conflict');
    expect(status.message).toContain('the object has been modified');
  });
});

describe('strategic merge patch', () => {
  it('merges containers by name and env by name', async () => {
    const rs = replicaSet('smp', cluster.namespace, 0);
    containersOf(rs)[0]!.env = [{ name: 'A', value: '1' }];
    await cluster.objects.create(rs);
    const patched = await cluster.apps.patchNamespacedReplicaSet(
      {
        name: 'smp',
        namespace: cluster.namespace,
        body: {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'app', env: [{ name: 'B', value: '2' }] },
                  { name: 'sidecar', image: 'busybox:1.36' },
                ],
              },
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const containers = containersOf(patched);
    expect(containers.map((c) => c.name).sort()).toEqual(['app', 'sidecar']);
    const app = containers.find((c) => c.name === 'app');
    expect(app?.image).toBe('nginx:1.27');
    const env = (app?.env ?? []).map((e) => `${e.name}=${e.value}`).sort();
    expect(env).toEqual(['A=1', 'B=2']);
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('applies operations in order', async () => {
    await cluster.objects.create(replicaSet('jsonp', cluster.namespace, 0));
    const patched = await cluster.apps.patchNamespacedReplicaSet({
      name: 'jsonp',
      namespace: cluster.namespace,
      body: [
        { op: 'test', path: '/spec/replicas', value: 0 },
        { op: 'replace', path: '/spec/replicas', value: 2 },
        { op: 'add', path: '/metadata/labels/tier', value: 'web' },
      ],
    });
    expect(patched.spec?.replicas).toBe(2);
    expect(patched.metadata?.labels).toEqual({ app: 'jsonp', tier: 'web' });
  });

  it('rejects a failing test operation with 422 and changes nothing', async () => {
    await cluster.objects.create(replicaSet('jsonp-test', cluster.namespace, 0));
    const { code } = await failure(
      cluster.apps.patchNamespacedReplicaSet({
        name: 'jsonp-test',
        namespace: cluster.namespace,
        body: [
          { op: 'test', path: '/spec/replicas', value: 7 },
          { op: 'replace', path: '/spec/replicas', value: 3 },
        ],
      }),
    );
    expect(code).toBe(422);
    const live = await cluster.apps.readNamespacedReplicaSet({
      name: 'jsonp-test',
      namespace: cluster.namespace,
    });
    expect(live.spec?.replicas).toBe(0);
  });
});

describe('server-side apply', () => {
  const applied = (replicas: number) => {
    const rs = replicaSet('ssa', cluster.namespace, replicas);
    delete (rs.metadata as { labels?: unknown }).labels;
    return rs;
  };
  const apply = (body: ReturnType<typeof applied>, manager: string, force?: boolean) =>
    cluster.objects.patch(body, undefined, undefined, manager, force, PatchStrategy.ServerSideApply);

  it('creates the object and records the manager in managedFields', async () => {
    const created = await apply(applied(1), 'alice');
    expect(created.metadata?.uid).toBeTruthy();
    const managers = (created.metadata?.managedFields ?? []).map((m) => [m.manager, m.operation]);
    expect(managers).toContainEqual(['alice', 'Apply']);
  });

  it('answers 409 with FieldManagerConflict causes when another manager owns a changed field', async () => {
    const { code, status } = await failure(apply(applied(3), 'bob'));
    expect(code).toBe(409);
    expect(status.reason).toBe('Conflict');
    expect(status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
    expect(status.details?.causes).toEqual([
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "alice"',
        field: '.spec.replicas',
      },
    ]);
  });

  it('lets a manager apply the same value without conflict (shared ownership)', async () => {
    const shared = await apply(applied(1), 'bob');
    expect((shared as { spec: { replicas: number } }).spec.replicas).toBe(1);
  });

  it('takes the field over with force', async () => {
    const forced = await apply(applied(4), 'bob', true);
    expect((forced as { spec: { replicas: number } }).spec.replicas).toBe(4);
    const alice = forced.metadata?.managedFields?.find((m) => m.manager === 'alice');
    expect(JSON.stringify(alice?.fieldsV1 ?? {})).not.toContain('f:replicas');
  });

  it("records a status write under its own manager and subresource, leaving the spec's owner as it was", async () => {
    const engine = replicaSet('ssa-status', cluster.namespace, 0);
    await cluster.objects.patch(engine, undefined, undefined, 'engine', true, PatchStrategy.ServerSideApply);
    const live = await cluster.apps.readNamespacedReplicaSet({
      name: 'ssa-status',
      namespace: cluster.namespace,
    });
    // The body carries a forged managedFields list: a subresource write takes none of it.
    const forged = [
      {
        manager: 'forged',
        operation: 'Update',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      },
    ];
    const written = await cluster.apps.replaceNamespacedReplicaSetStatus({
      name: 'ssa-status',
      namespace: cluster.namespace,
      fieldManager: 'status-writer',
      body: {
        ...live,
        metadata: { ...live.metadata, managedFields: forged as never },
        status: {
          replicas: 0,
          conditions: [{ type: 'ReplicaFailure', status: 'False', reason: 'Checked', message: 'none' }],
        },
      },
    });
    const entries = written.metadata?.managedFields ?? [];
    expect(entries.map((m) => m.manager)).not.toContain('forged');
    const writer = entries.find((m) => m.manager === 'status-writer');
    // `subresource: status` is recorded from Kubernetes 1.22 on; the real server here (1.20) leaves it out.
    expect(writer?.operation).toBe('Update');
    expect([undefined, 'status']).toContain(writer?.subresource);
    expect(JSON.stringify(writer?.fieldsV1)).toContain('f:conditions');
    expect(JSON.stringify(writer?.fieldsV1)).not.toContain('f:spec');
    const owner = entries.find((m) => m.manager === 'engine');
    expect(owner?.operation).toBe('Apply');
    expect(JSON.stringify(owner?.fieldsV1)).toContain('f:replicas');
  });

  it('requires a fieldManager', async () => {
    const { code } = await failure(
      cluster.objects.patch(
        applied(1),
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.ServerSideApply,
      ),
    );
    expect(code).toBe(422);
  });
});
