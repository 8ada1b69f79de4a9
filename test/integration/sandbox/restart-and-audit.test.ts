// The sandbox's API server restart (connections cut, down for a while, watch history gone) and its write audit log.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { recordWatch } from '../../conformance/support/watch-recorder.ts';
import { eventually } from '../../support/eventually.ts';

let sandbox: Sandbox;
let core: CoreV1Api;
beforeEach(async () => {
  sandbox = await startSandbox();
  core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
});
afterEach(async () => {
  await sandbox.stop();
});

const configMap = (name: string, v: string) => ({ metadata: { name }, data: { v } });

describe('sandbox restart', () => {
  it('cuts watches, refuses connections while down, keeps every object, and answers 410 to earlier versions', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: configMap('kept', '1'),
    });
    const before = created.metadata?.resourceVersion ?? '';
    const open = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {
      resourceVersion: before,
    });

    // A change the open watch saw: resuming from before it needs history a restarted server no longer has.
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('later', '2') });
    await open.until((e) => e.length > 0, 3000);

    const restarted = sandbox.restart({ downMs: 500 });
    await open.ended;
    // Down for 500 ms: a request in that time is refused (asked until it is, well within the 500 ms).
    await eventually(
      'a request refused while down',
      () =>
        fetch(`${sandbox.url}/version`).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 300, intervalMs: 20 },
    );
    await restarted;

    const kept = await core.readNamespacedConfigMap({ name: 'kept', namespace: 'default' });
    expect(kept.data).toEqual({ v: '1' });
    const resumed = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {
      resourceVersion: before,
    });
    await resumed.ended;
    expect(resumed.events.map((e) => [e.type, (e.object as { code?: number }).code])).toEqual([
      ['ERROR', 410],
    ]);
    // A fresh watch (no resourceVersion) lists what is there: how a client recovers from 410.
    const fresh = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {});
    const events = await fresh.until((e) => e.length >= 2, 3000);
    fresh.stop();
    expect(events.map((e) => [e.type, e.object.metadata?.name]).sort()).toEqual([
      ['ADDED', 'kept'],
      ['ADDED', 'later'],
    ]);
  });
});

describe('sandbox write audit', () => {
  it('records each write request with its answer, and a write that changed nothing shows the same resourceVersion', async () => {
    sandbox.audit.clear();
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a', '1') });
    await expect(
      core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a', '1') }),
    ).rejects.toThrow();
    const live = await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' });
    await core.replaceNamespacedConfigMap({ name: 'a', namespace: 'default', body: live });
    await core.listNamespacedConfigMap({ namespace: 'default' });

    const entries = sandbox.audit.entries();
    expect(entries.map((e) => [e.verb, e.resource, e.name, e.code])).toEqual([
      ['POST', 'configmaps', 'a', 201],
      ['POST', 'configmaps', 'a', 409],
      ['PUT', 'configmaps', 'a', 200],
    ]);
    expect(entries[2]?.resourceVersion).toBe(entries[0]?.resourceVersion);
    expect(entries[0]?.userAgent).toMatch(/kubernetes-client/);
  });
});
