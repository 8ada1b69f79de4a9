// A rollout's reads (the reconciler's passes that ask the API) over plain HTTP and over client-node, against the
// sandbox: the same objects as a reader's plain copy, the same typed errors, the same requests counted, and
// client-node sending whatever the plain path does not (paging, request options, impersonating clients).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createImpersonatingKubeClients,
  createKubeClients,
  observeKubeRequests,
  type KubeClients,
} from '../../../src/kube/client.ts';
import { kubeCall, KubeNotFoundError } from '../../../src/kube/errors.ts';
import type { KubeRequestObservation } from '../../../src/kube/kube-request.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import type { ObjectReadClients } from '../../../src/kube/object-read-clients.ts';
import { toPlainObject } from '../../../src/kube/plain-object.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { ObservedStateReader } from '../../../src/reconciler/observed-state-reader.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { testRollout } from '../reconcile/reconcile-harness.ts';

const TOKEN = 'plain-reads-token';
const NAMESPACE = 'default';
const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts' } as const;

let sandbox: Sandbox;
/** Clients with the plain reads (the reconciler's), and the same without (client-node only). */
let plain: KubeClients;
let typed: KubeClients;
beforeAll(async () => {
  sandbox = await startSandbox({ token: TOKEN, readyDelayMs: 0 });
  plain = createKubeClients(sandbox.kubeConfig);
  typed = createKubeClients(sandbox.kubeConfig, { plainWrites: false });
  await installCrds(typed, rollgateCrds());
  await typed.custom.createNamespacedCustomObject({
    ...ROLLOUTS,
    namespace: NAMESPACE,
    body: { ...testRollout({ name: 'web', replicas: 2 }), apiVersion: 'rollgate.dev/v1alpha1' },
  });
  await typed.apps.createNamespacedReplicaSet({
    namespace: NAMESPACE,
    body: {
      metadata: { name: 'web-1', labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
        },
      },
    },
  });
  await typed.core.createNamespacedService({
    namespace: NAMESPACE,
    body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
  });
  await sandbox.settle();
});
afterAll(async () => sandbox.stop());

/** `reads` with every call counted by method, passed on unchanged. */
function counted(reads: ObjectReadClients): { reads: ObjectReadClients; calls: string[] } {
  const calls: string[] = [];
  const wrap = <T extends object>(client: T): T =>
    new Proxy(client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(property));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return { reads: { core: wrap(reads.core), apps: wrap(reads.apps), custom: wrap(reads.custom) }, calls };
}

const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** `value` with every RFC 3339 instant printed one way (milliseconds always). */
function sameInstants(value: unknown): unknown {
  if (typeof value === 'string') return INSTANT.test(value) ? new Date(value).toISOString() : value;
  if (Array.isArray(value)) return value.map(sameInstants);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sameInstants(v)]));
  return value;
}

/** What a user of the reads sees: each answer as a reader's plain copy, and the requests counted. */
async function readAll(reads: ObjectReadClients) {
  const requests: KubeRequestObservation[] = [];
  const stop = observeKubeRequests(sandbox.kubeConfig, (o) => requests.push(o));
  try {
    const labelSelector = 'app=web';
    const answers = {
      rollout: await reads.custom.getNamespacedCustomObject({
        ...ROLLOUTS,
        namespace: NAMESPACE,
        name: 'web',
      }),
      rollouts: await reads.custom.listNamespacedCustomObject({ ...ROLLOUTS, namespace: NAMESPACE }),
      replicaSets: await reads.apps.listNamespacedReplicaSet({ namespace: NAMESPACE, labelSelector }),
      replicaSet: await reads.apps.readNamespacedReplicaSet({ namespace: NAMESPACE, name: 'web-1' }),
      pods: await reads.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector }),
      service: await reads.core.readNamespacedService({ namespace: NAMESPACE, name: 'web' }),
    };
    return {
      answers: toPlainObject<Record<string, unknown>>(answers),
      requests: requests.map((r) => `${r.verb} ${r.resource} ${r.code}`),
    };
  } finally {
    stop();
  }
}

describe('a rollout’s reads over plain HTTP', () => {
  it('answer what client-node answers, as a reader copies it, with the same requests counted', async () => {
    const viaPlain = counted(plain.reads!);
    const viaClientNode = counted(typed);
    const a = await readAll(viaPlain.reads);
    const b = await readAll(viaClientNode.reads);
    // client-node prints every time it parsed with milliseconds (`…:01.000Z`); the plain answer keeps the
    // API server's text (`…:01Z`), as the informer cache, the reconciler's other source, does.
    expect(sameInstants(a.answers)).toEqual(sameInstants(b.answers));
    expect(JSON.stringify(a.answers)).toMatch(/"startTime":"[^"]*:\d\dZ"/);
    expect((a.answers.pods as { items: unknown[] }).items).toHaveLength(2);
    expect(a.requests).toEqual(b.requests);
    expect(a.requests).toHaveLength(6);
  });

  it('leave to client-node what they do not send: paging, a resourceVersion, request options', async () => {
    const behind = counted(plain);
    const { plainObjectReads } = await import('../../../src/kube/plain-object-reads.ts');
    const { PlainKubeHttp } = await import('../../../src/kube/plain-kube-http.ts');
    const http = new PlainKubeHttp(
      sandbox.kubeConfig,
      { limiter: undefined, observers: new Set() },
      {
        userAgent: 'plain-reads-test',
      },
    );
    const reads = plainObjectReads(behind.reads, http);
    await reads.apps.listNamespacedReplicaSet({ namespace: NAMESPACE, labelSelector: 'app=web' });
    await reads.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'app=web' });
    expect(behind.calls).toEqual([]);
    await reads.apps.listNamespacedReplicaSet({ namespace: NAMESPACE, limit: 1 });
    await reads.core.listNamespacedPod({ namespace: NAMESPACE, resourceVersion: '0' });
    await reads.custom.listNamespacedCustomObject({ ...ROLLOUTS, namespace: NAMESPACE, watch: false });
    expect(behind.calls).toEqual([
      'listNamespacedReplicaSet',
      'listNamespacedPod',
      'listNamespacedCustomObject',
    ]);
  });

  it('fail as client-node’s do: a missing Rollout is the same typed error, which the reader takes as gone', async () => {
    const missing = { ...ROLLOUTS, namespace: NAMESPACE, name: 'nowhere' };
    const call = (reads: ObjectReadClients) =>
      kubeCall({ verb: 'get', kind: 'Rollout', namespace: NAMESPACE, name: 'nowhere' }, () =>
        reads.custom.getNamespacedCustomObject(missing),
      ).catch((e: unknown) => e);
    const [a, b] = [await call(plain.reads!), await call(typed)];
    expect(a).toBeInstanceOf(KubeNotFoundError);
    expect(b).toBeInstanceOf(KubeNotFoundError);
    expect((a as Error).message).toBe((b as Error).message);
    expect(await new ObservedStateReader(plain.reads!).read({ namespace: NAMESPACE, name: 'nowhere' })).toBe(
      undefined,
    );
  });

  it('are not made for clients that act as a signed-in person (they must not read as Rollgate)', () => {
    const acting = createImpersonatingKubeClients(sandbox.kubeConfig, { user: 'alice', groups: [] });
    expect(acting.reads).toBeUndefined();
    expect(createKubeClients(sandbox.kubeConfig, { plainWrites: false }).reads).toBeUndefined();
  });
});
