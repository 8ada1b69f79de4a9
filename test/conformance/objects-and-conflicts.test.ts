// Conformance: object metadata, optimistic concurrency and the exact Status bodies of 404/409/422.
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { configMap, failure, replicaSet } from './support/conformance-cluster.ts';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';

const cluster = useConformanceCluster();

describe('object metadata', () => {
  it('assigns uid, creationTimestamp, resourceVersion and generation on create', async () => {
    const rs = await cluster.objects.create(replicaSet('meta', cluster.namespace, 0));
    expect(rs.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(rs.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(rs.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(rs.metadata?.generation).toBe(1);
  });

  it('names objects from generateName with a 5-character suffix', async () => {
    const generated = (): Promise<KubernetesObject> =>
      cluster.objects.create({
        ...configMap('', cluster.namespace),
        metadata: { generateName: 'gen-', namespace: cluster.namespace },
      } as KubernetesObject);
    const a = await generated();
    const b = await generated();
    expect(a.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(b.metadata?.name).not.toBe(a.metadata?.name);
  });

  it('keeps generateName, and cuts a long prefix to 58 characters so the name fits 63', async () => {
    const prefix = `${'long-'.repeat(13)}prefix-`;
    const created = await cluster.objects.create({
      ...configMap('', cluster.namespace),
      metadata: { generateName: prefix, namespace: cluster.namespace },
    } as KubernetesObject);
    expect(created.metadata?.generateName).toBe(prefix);
    expect(created.metadata?.name).toHaveLength(63);
    expect(created.metadata?.name?.startsWith(prefix.slice(0, 58))).toBe(true);
  });

  it('bumps generation on spec changes only, and resourceVersion on every real change', async () => {
    await cluster.objects.create(replicaSet('gen', cluster.namespace, 0));
    // Re-read before each write: the ReplicaSet controller writes status concurrently, as on a real cluster.
    const fresh = () =>
      cluster.objects.read({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'gen', namespace: cluster.namespace },
      });
    const before = await fresh();
    const labelled = await cluster.objects.replace({
      ...before,
      metadata: { ...before.metadata, labels: { app: 'gen', extra: 'yes' } },
    });
    expect(labelled.metadata?.generation).toBe(1);
    expect(labelled.metadata?.resourceVersion).not.toBe(before.metadata?.resourceVersion);
    const current = await fresh();
    const scaled = await cluster.objects.replace({
      ...current,
      spec: { ...(current as { spec: object }).spec, minReadySeconds: 3 },
    });
    expect(scaled.metadata?.generation).toBe(2);
  });

  it('keeps resourceVersion when an update changes nothing', async () => {
    const created = await cluster.objects.create(configMap('noop', cluster.namespace, { a: '1' }));
    const same = await cluster.objects.replace(created);
    expect(same.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });
});

describe('errors', () => {
  it('answers a stale update with 409 Conflict and the exact Status body', async () => {
    const created = await cluster.objects.create(configMap('stale', cluster.namespace, { a: '1' }));
    await cluster.objects.replace({ ...created, data: { a: '2' } });
    const { code, status } = await failure(cluster.objects.replace({ ...created, data: { a: '3' } }));
    expect(code).toBe(409);
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'stale', kind: 'configmaps' },
      code: 409,
    });
  });

  it('qualifies the resource with its group in a conflict', async () => {
    const created = await cluster.objects.create(replicaSet('stale-rs', cluster.namespace, 0));
    const stale = { ...created, metadata: { ...created.metadata, resourceVersion: '1' } };
    const { status } = await failure(
      cluster.objects.replace({
        ...stale,
        metadata: { ...stale.metadata, labels: { app: 'stale-rs', v: '3' } },
      }),
    );
    expect(status.message).toBe(
      'Operation cannot be fulfilled on replicasets.apps "stale-rs": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(status.details).toEqual({ name: 'stale-rs', group: 'apps', kind: 'replicasets' });
  });

  it('answers a duplicate create with 409 AlreadyExists', async () => {
    await cluster.objects.create(configMap('dup', cluster.namespace));
    const { code, status } = await failure(cluster.objects.create(configMap('dup', cluster.namespace)));
    expect(code).toBe(409);
    expect(status.reason).toBe('AlreadyExists');
    expect(status.message).toBe('configmaps "dup" already exists');
    expect(status.details).toEqual({ name: 'dup', kind: 'configmaps' });
  });

  it('answers a missing object with 404 NotFound', async () => {
    const { code, status } = await failure(
      cluster.core.readNamespacedConfigMap({ name: 'absent', namespace: cluster.namespace }),
    );
    expect(code).toBe(404);
    expect(status).toMatchObject({
      reason: 'NotFound',
      message: 'configmaps "absent" not found',
      details: { name: 'absent', kind: 'configmaps' },
    });
  });

  it('answers an invalid ReplicaSet with 422 Invalid and causes', async () => {
    const { code, status } = await failure(cluster.objects.create(replicaSet('bad', cluster.namespace, -1)));
    expect(code).toBe(422);
    expect(status.reason).toBe('Invalid');
    expect(status.message).toContain('ReplicaSet.apps "bad" is invalid');
    expect(status.details?.causes).toContainEqual(
      expect.objectContaining({ reason: 'FieldValueInvalid', field: 'spec.replicas' }),
    );
  });

  it('rejects a template whose labels do not match the selector', async () => {
    const rs = replicaSet('mismatch', cluster.namespace, 1);
    (rs.spec as { selector: unknown }).selector = { matchLabels: { app: 'other' } };
    const { code, status } = await failure(cluster.objects.create(rs));
    expect(code).toBe(422);
    expect(status.details?.causes?.map((c) => c.field)).toContain('spec.template.metadata.labels');
  });
});
