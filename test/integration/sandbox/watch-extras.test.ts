// Sandbox-only watch behaviours: bookmarks, timeoutSeconds, and a client-node informer surviving drops and 410s.
import { CoreV1Api, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { recordWatch } from '../../conformance/support/watch-recorder.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ bookmarkIntervalMs: 100 });
});
afterAll(async () => {
  await sandbox.stop();
});

describe('watch extras', () => {
  it('sends BOOKMARK events carrying the current resourceVersion when allowed', async () => {
    const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'bm' } },
    });
    const watch = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {
      allowWatchBookmarks: true,
      resourceVersion: created.metadata?.resourceVersion ?? '',
    });
    const events = await watch.until((e) => e.some((x) => x.type === 'BOOKMARK'), 3000);
    watch.stop();
    const bookmark = events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object.kind).toBe('ConfigMap');
    expect(Number(bookmark?.object.metadata?.resourceVersion)).toBeGreaterThanOrEqual(
      Number(created.metadata?.resourceVersion),
    );
  });

  it('sends no bookmarks unless asked, and ends at timeoutSeconds', async () => {
    const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'nb' } } });
    const watch = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {
      timeoutSeconds: '1',
      fieldSelector: 'metadata.name=nb',
    });
    await watch.ended;
    expect(watch.events.filter((e) => e.type === 'BOOKMARK')).toEqual([]);
    expect(watch.events.map((e) => e.type)).toEqual(['ADDED']);
  });
});

describe('client-node informer', () => {
  it('keeps its cache right through dropped watches and an expired resourceVersion', async () => {
    // A history of one event: a watch dropped after the first of three deletions can only resume with 410.
    const own = await startSandbox({ historyLimit: 1 });
    try {
      const core = own.kubeConfig.makeApiClient(CoreV1Api);
      const informer = makeInformer<V1ConfigMap>(
        own.kubeConfig,
        '/api/v1/namespaces/default/configmaps',
        () => core.listNamespacedConfigMap({ namespace: 'default' }),
      );
      const seen: string[] = [];
      informer.on('add', (o) => seen.push(`add ${o.metadata?.name ?? ''}`));
      informer.on('update', (o) => seen.push(`update ${o.metadata?.name ?? ''}`));
      informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name ?? ''}`));
      const until = async (entry: string): Promise<void> => {
        const deadline = Date.now() + 5000;
        while (!seen.includes(entry) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      };
      const create = (name: string, labels: Record<string, string> = {}) =>
        core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels } } });
      await create('a');
      await informer.start();
      await create('b');
      await core.patchNamespacedConfigMap({
        name: 'b',
        namespace: 'default',
        body: [{ op: 'add', path: '/data', value: { x: '1' } }],
      });
      await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
      for (const name of ['c', 'd', 'e']) await create(name, { batch: 'old' });
      await until('add e');
      own.faults.watchDropAfterEvents = 1;
      // One request, three DELETED events: the watch delivers the first and drops; the two others are
      // already out of the history when the informer resumes, so only a re-list can show them.
      await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'batch=old' });
      await until('delete e');
      own.faults.watchDropAfterEvents = 0;
      await create('f');
      await until('add f');
      await informer.stop();
      expect(seen).toEqual([
        'add a',
        'add b',
        'update b',
        'delete a',
        'add c',
        'add d',
        'add e',
        'delete c',
        'delete d',
        'delete e',
        'add f',
      ]);
      expect(
        informer
          .list()
          .map((o) => o.metadata?.name)
          .sort(),
      ).toEqual(['b', 'f']);
    } finally {
      await own.stop();
    }
  });
});
