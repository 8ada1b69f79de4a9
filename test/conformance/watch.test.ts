// Conformance: watch streams, resume from a resourceVersion, 410 Gone for expired versions, selector transitions.
import { describe, expect, it } from 'vitest';
import { configMap } from './support/conformance-cluster.ts';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';
import { recordWatch } from './support/watch-recorder.ts';

const cluster = useConformanceCluster();

const path = () => `/api/v1/namespaces/${cluster.namespace}/configmaps`;

describe('watch', () => {
  it('starts with ADDED for existing objects when no resourceVersion is given, then streams changes', async () => {
    await cluster.objects.create(configMap('w-existing', cluster.namespace, { v: '1' }));
    const watch = await recordWatch(cluster.kubeConfig, path(), {
      fieldSelector: 'metadata.name=w-existing',
    });
    await watch.until((e) => e.some((x) => x.type === 'ADDED'));
    await cluster.core.patchNamespacedConfigMap({
      name: 'w-existing',
      namespace: cluster.namespace,
      body: [{ op: 'replace', path: '/data/v', value: '2' }],
    });
    await cluster.core.deleteNamespacedConfigMap({ name: 'w-existing', namespace: cluster.namespace });
    const events = await watch.until((e) => e.some((x) => x.type === 'DELETED'));
    watch.stop();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('resumes from a resourceVersion and replays exactly the later changes', async () => {
    const created = await cluster.objects.create(configMap('w-resume', cluster.namespace, { v: '0' }));
    const from = created.metadata?.resourceVersion ?? '';
    for (const v of ['1', '2', '3']) {
      await cluster.core.patchNamespacedConfigMap({
        name: 'w-resume',
        namespace: cluster.namespace,
        body: [{ op: 'replace', path: '/data/v', value: v }],
      });
    }
    const watch = await recordWatch(cluster.kubeConfig, path(), {
      resourceVersion: from,
      fieldSelector: 'metadata.name=w-resume',
    });
    const events = await watch.until((e) => e.length >= 3);
    watch.stop();
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED']);
    const versions = events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    expect(versions[0]).toBeGreaterThan(Number(from));
  });

  it('answers a resourceVersion older than the history with an ERROR event carrying 410 Expired', async () => {
    const created = await cluster.objects.create(configMap('w-gone', cluster.namespace));
    if (cluster.sandbox) {
      const res = await fetch(`${cluster.sandbox.url}/sandbox/compact`, { method: 'POST' });
      expect(res.status).toBe(200);
    }
    const old = '1';
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(1);
    const watch = await recordWatch(cluster.kubeConfig, path(), { resourceVersion: old });
    const events = await watch.until((e) => e.some((x) => x.type === 'ERROR'));
    watch.stop();
    const error = events.find((e) => e.type === 'ERROR')?.object;
    expect(error).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(error?.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    const watch = await recordWatch(cluster.kubeConfig, path(), { labelSelector: 'tier=web' });
    await cluster.objects.create({
      ...configMap('w-sel', cluster.namespace),
      metadata: { name: 'w-sel', namespace: cluster.namespace, labels: { tier: 'db' } },
    });
    await cluster.core.patchNamespacedConfigMap({
      name: 'w-sel',
      namespace: cluster.namespace,
      body: [{ op: 'replace', path: '/metadata/labels/tier', value: 'web' }],
    });
    await cluster.core.patchNamespacedConfigMap({
      name: 'w-sel',
      namespace: cluster.namespace,
      body: [{ op: 'replace', path: '/metadata/labels/tier', value: 'cache' }],
    });
    const events = await watch.until((e) => e.some((x) => x.type === 'DELETED'));
    watch.stop();
    // The DELETED of an object leaving the selector carries its previous state (the labels that matched),
    // at the resourceVersion of the change that moved it out.
    expect(events.map((e) => [e.type, e.object.metadata?.labels?.tier])).toEqual([
      ['ADDED', 'web'],
      ['DELETED', 'web'],
    ]);
    const current = await cluster.core.readNamespacedConfigMap({
      name: 'w-sel',
      namespace: cluster.namespace,
    });
    expect(events[1]?.object.metadata?.resourceVersion).toBe(current.metadata?.resourceVersion);
  });
});
