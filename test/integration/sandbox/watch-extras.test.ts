// Sandbox-only watch behaviours: bookmarks at a configurable interval and timeoutSeconds.
import { CoreV1Api } from '@kubernetes/client-node';
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
      timeoutSeconds: 1,
      fieldSelector: 'metadata.name=nb',
    });
    await watch.ended;
    expect(watch.events.filter((e) => e.type === 'BOOKMARK')).toEqual([]);
    expect(watch.events.map((e) => e.type)).toEqual(['ADDED']);
  });
});
