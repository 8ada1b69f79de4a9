// Fault injection (conflicts, 5xx, latency, dropped watches), its admin endpoint, determinism and token auth.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { failure } from '../../conformance/support/conformance-cluster.ts';
import { recordWatch } from '../../conformance/support/watch-recorder.ts';

const started: Sandbox[] = [];
async function sandboxWith(
  options: Parameters<typeof startSandbox>[0] = {},
): Promise<{ sandbox: Sandbox; core: CoreV1Api }> {
  const sandbox = await startSandbox(options);
  started.push(sandbox);
  return { sandbox, core: sandbox.kubeConfig.makeApiClient(CoreV1Api) };
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

const patchData = (core: CoreV1Api, value: string) =>
  core.patchNamespacedConfigMap({
    name: 'cm',
    namespace: 'default',
    body: [{ op: 'add', path: '/data', value: { v: value } }],
  });

describe('fault injection', () => {
  it('answers updates with the real 409 Conflict body at conflictRate 1, and never touches the object', async () => {
    const { sandbox, core } = await sandboxWith();
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cm' } },
    });
    sandbox.faults.conflictRate = 1;
    const { code, status } = await failure(patchData(core, 'x'));
    expect(code).toBe(409);
    expect(status.message).toBe(
      'Operation cannot be fulfilled on configmaps "cm": the object has been modified; please apply your changes to the latest version and try again',
    );
    sandbox.faults.conflictRate = 0;
    const live = await core.readNamespacedConfigMap({ name: 'cm', namespace: 'default' });
    expect(live.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });

  it('injects the same faults for the same seed', async () => {
    const outcomes = async (seed: number): Promise<number[]> => {
      const { core } = await sandboxWith({ seed, faults: { conflictRate: 0.5 } });
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm' } } });
      const codes: number[] = [];
      for (let i = 0; i < 20; i++) {
        codes.push(
          await patchData(core, String(i)).then(
            () => 200,
            (err: { code: number }) => err.code,
          ),
        );
      }
      return codes;
    };
    const first = await outcomes(7);
    expect(first).toEqual(await outcomes(7));
    expect(first).toContain(409);
    expect(first).toContain(200);
  });

  it('answers 500 at errorRate 1, reads included', async () => {
    const { core } = await sandboxWith({ faults: { errorRate: 1 } });
    const { code, status } = await failure(core.listNamespacedConfigMap({ namespace: 'default' }));
    expect(code).toBe(500);
    expect(status.reason).toBe('InternalError');
  });

  it('adds latency to every request', async () => {
    const { core } = await sandboxWith({ faults: { latencyMs: 150 } });
    const start = performance.now();
    await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(performance.now() - start).toBeGreaterThanOrEqual(140);
  });

  it('drops watches after N events', async () => {
    const { sandbox, core } = await sandboxWith({ faults: { watchDropAfterEvents: 2 } });
    for (const name of ['a', 'b', 'c'])
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
    const watch = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {});
    await watch.ended;
    expect(watch.events).toHaveLength(2);
  });

  it('drops watches after a time', async () => {
    const { sandbox } = await sandboxWith({ faults: { watchDropAfterMs: 100 } });
    const watch = await recordWatch(sandbox.kubeConfig, '/api/v1/namespaces/default/configmaps', {});
    const start = performance.now();
    await watch.ended;
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('is tuned at run time through /sandbox/faults and never blocks the controllers', async () => {
    const { sandbox, core } = await sandboxWith();
    const res = await fetch(`${sandbox.url}/sandbox/faults`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ conflictRate: 1 }),
    });
    expect(res.status).toBe(200);
    expect(sandbox.faults.conflictRate).toBe(1);
    const bad = await fetch(`${sandbox.url}/sandbox/faults`, {
      method: 'PATCH',
      body: JSON.stringify({ conflictRate: 2 }),
    });
    expect(bad.status).toBe(400);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm' } } });
    const { code } = await failure(patchData(core, 'x'));
    expect(code).toBe(409);
    // Every update request now conflicts, yet the controllers create pods and write status as usual.
    const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
    await apps.createNamespacedReplicaSet({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    await sandbox.settle();
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    expect(pods.items).toHaveLength(2);
    const rs = await apps.readNamespacedReplicaSet({ name: 'web', namespace: 'default' });
    expect(rs.status).toMatchObject({ replicas: 2, observedGeneration: 1 });
  });
});

describe('bearer token', () => {
  it('rejects requests without the token and accepts the kubeconfig it writes', async () => {
    const { sandbox, core } = await sandboxWith({ token: 's3cret' });
    const anonymous = await fetch(`${sandbox.url}/api/v1/namespaces`);
    expect(anonymous.status).toBe(401);
    const list = await core.listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).toContain('default');
  });
});
