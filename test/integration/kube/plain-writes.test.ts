// The reconciler's writes (and the sync's apply of a Rollout) over plain HTTP and over client-node, against the
// sandbox: the same objects written, the same managers, the same typed errors with the same messages, the same
// requests counted.
import { KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createKubeClients,
  FIELD_MANAGER,
  MERGE_PATCH,
  observeKubeRequests,
  type KubeClients,
} from '../../../src/kube/client.ts';
import { kubeCall, KubeConflictError, KubeInvalidError } from '../../../src/kube/errors.ts';
import type { KubeRequestObservation } from '../../../src/kube/kube-request.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { PlainKubeHttp } from '../../../src/kube/plain-kube-http.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { sandboxKubeConfig, startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { testRollout } from '../reconcile/reconcile-harness.ts';

const TOKEN = 'plain-writes-token';
const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts' } as const;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ token: TOKEN });
  await installCrds(createKubeClients(sandbox.kubeConfig, { plainWrites: false }), rollgateCrds());
});
afterAll(async () => sandbox.stop());

/** A ReplicaSet of `name` with `replicas`, as createReplicaSet builds one. */
function replicaSet(namespace: string, name: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
      },
    },
  };
}

function inNamespace(object: Record<string, unknown>, namespace: string): Record<string, unknown> {
  return { ...object, metadata: { ...(object.metadata as object), namespace } };
}

/** Everything a user would see of one pass's writes on `clients`, and what failed how. */
async function writeAsAPass(clients: KubeClients, namespace: string) {
  const requests: KubeRequestObservation[] = [];
  const stop = observeKubeRequests(clients.kubeConfig, (o) => requests.push(o));
  try {
    await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
    const created = await clients.apps.createNamespacedReplicaSet({
      namespace,
      body: replicaSet(namespace, 'web-1', 1),
      fieldManager: FIELD_MANAGER,
    });
    // The sandbox's ReplicaSet controller writes the status meanwhile: a version of its own would race it.
    const staleVersion = String(Number(created.metadata?.resourceVersion) - 1);
    const patch = (resourceVersion: string | undefined, replicas: number, dryRun?: string) =>
      kubeCall({ verb: 'patch', kind: 'ReplicaSet', namespace, name: 'web-1' }, () =>
        clients.apps.patchNamespacedReplicaSet(
          {
            namespace,
            name: 'web-1',
            body: {
              metadata: {
                ...(resourceVersion !== undefined && { resourceVersion }),
                annotations: { a: 'b' },
              },
              spec: { replicas },
            },
            fieldManager: FIELD_MANAGER,
            ...(dryRun !== undefined && { dryRun }),
          },
          MERGE_PATCH,
        ),
      );
    await patch(undefined, 5, 'All');
    const afterDryRun = await clients.apps.readNamespacedReplicaSet({ namespace, name: 'web-1' });
    const patched = await patch(undefined, 3);
    const stale = await patch(staleVersion, 4).catch((err: unknown) => err);

    await clients.custom.createNamespacedCustomObject({
      ...ROLLOUTS,
      namespace,
      body: inNamespace(testRollout({ name: 'web' }), namespace),
    });
    const rollout = (await clients.custom.getNamespacedCustomObject({
      ...ROLLOUTS,
      namespace,
      name: 'web',
    })) as {
      metadata: Record<string, unknown>;
    };
    const annotated = (await clients.custom.patchNamespacedCustomObject(
      {
        ...ROLLOUTS,
        namespace,
        name: 'web',
        body: { metadata: { resourceVersion: rollout.metadata.resourceVersion, annotations: { r: '1' } } },
        fieldManager: FIELD_MANAGER,
      },
      MERGE_PATCH,
    )) as { metadata: Record<string, unknown> };
    const { managedFields: _managed, ...metadata } = annotated.metadata;
    const statusWritten = (await clients.custom.replaceNamespacedCustomObjectStatus({
      ...ROLLOUTS,
      namespace,
      name: 'web',
      body: { ...annotated, metadata, status: { phase: 'Progressing', message: 'plain' } },
      fieldManager: FIELD_MANAGER,
    })) as { status: unknown };
    const staleStatus = await kubeCall(
      { verb: 'update', kind: 'Rollout', namespace, name: 'web', subresource: 'status' },
      () =>
        clients.custom.replaceNamespacedCustomObjectStatus({
          ...ROLLOUTS,
          namespace,
          name: 'web',
          body: { ...annotated, metadata, status: { phase: 'Healthy' } },
          fieldManager: FIELD_MANAGER,
        }),
    ).catch((err: unknown) => err);
    const invalid = await kubeCall({ verb: 'create', kind: 'Event', namespace, name: 'bad' }, () =>
      clients.core.createNamespacedEvent({
        namespace,
        body: { metadata: { name: 'Not A Name!', namespace }, involvedObject: {} },
        fieldManager: FIELD_MANAGER,
      }),
    ).catch((err: unknown) => err);
    const now = new Date('2026-12-05T10:00:00.000Z');
    await clients.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: 'web.1', namespace },
        involvedObject: { kind: 'Rollout', name: 'web', namespace },
        reason: 'Step',
        message: 'm',
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
      },
      fieldManager: FIELD_MANAGER,
    });
    await clients.core.patchNamespacedEvent(
      { namespace, name: 'web.1', body: { count: 2 }, fieldManager: FIELD_MANAGER },
      MERGE_PATCH,
    );
    const event = await clients.core.readNamespacedEvent({ namespace, name: 'web.1' });

    const live = await clients.apps.readNamespacedReplicaSet({ namespace, name: 'web-1' });
    return {
      replicasAfterDryRun: afterDryRun.spec?.replicas,
      patchedReplicas: (patched as { spec: { replicas: number } }).spec.replicas,
      liveReplicas: live.spec?.replicas,
      liveAnnotations: live.metadata?.annotations,
      managers: live.metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`),
      stale: [(stale as Error).constructor.name, (stale as Error).message.replace(namespace, 'NS')],
      status: statusWritten.status,
      staleStatus: [
        (staleStatus as Error).constructor.name,
        (staleStatus as Error).message.replaceAll(namespace, 'NS'),
      ],
      invalid: [(invalid as Error).constructor.name, (invalid as Error).message.replaceAll(namespace, 'NS')],
      // client-node makes a Date of it, the plain path leaves the API server's string: the same instant.
      event: [event.count, new Date(event.firstTimestamp as unknown as string).toISOString()],
      requests: requests.map((o) => `${o.verb} ${o.resource} ${o.code}`),
      // Which path answered: only client-node's deserializer makes Dates.
      sentBy: event.firstTimestamp instanceof Date ? 'client-node' : 'plain',
    };
  } finally {
    stop();
  }
}

describe('plain writes beside client-node, against the sandbox', () => {
  it('write the same objects, fail with the same typed errors and count the same requests', async () => {
    const viaClientNode = await writeAsAPass(
      createKubeClients(sandbox.kubeConfig, { plainWrites: false }),
      'via-client-node',
    );
    // A KubeConfig of its own: its own connection, pool and observers.
    const viaPlain = await writeAsAPass(
      createKubeClients(sandboxKubeConfig(sandbox.url, TOKEN)),
      'via-plain',
    );
    expect([viaClientNode.sentBy, viaPlain.sentBy]).toEqual(['client-node', 'plain']);
    expect({ ...viaPlain, sentBy: undefined }).toEqual({ ...viaClientNode, sentBy: undefined });
    expect(viaPlain).toMatchObject({
      replicasAfterDryRun: 1,
      patchedReplicas: 3,
      liveReplicas: 3,
      liveAnnotations: { a: 'b' },
      stale: [
        'KubeConflictError',
        expect.stringContaining('patch ReplicaSet/NS/web-1: HTTP 409 Conflict:') as string,
      ],
      status: { phase: 'Progressing', message: 'plain' },
      staleStatus: ['KubeConflictError', expect.stringContaining('HTTP 409 Conflict') as string],
      invalid: ['KubeInvalidError', expect.stringContaining('HTTP 422 Invalid') as string],
    });
    expect(viaPlain.managers).toContain('rollgate/Update');
    expect(KubeConflictError.name).toBe(viaPlain.stale[0]);
    expect(KubeInvalidError.name).toBe(viaPlain.invalid[0]);
  });

  it('refuses a request without the kubeconfig token, as client-node does', async () => {
    const clients = createKubeClients(sandboxKubeConfig(sandbox.url, 'wrong-token'));
    const err = await kubeCall({ verb: 'create', kind: 'ReplicaSet', namespace: 'default', name: 'x' }, () =>
      clients.apps.createNamespacedReplicaSet({ namespace: 'default', body: replicaSet('default', 'x', 1) }),
    ).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('kube.forbidden');
    expect((err as Error).message).not.toContain('wrong-token');
  });
});

describe("the sync's server-side apply", () => {
  /** A Rollout as the sync prepares one (labels of its source), with `image`. */
  const preparedRollout = (namespace: string, image: string) => {
    const rollout = inNamespace(testRollout({ name: 'web' }), namespace);
    const metadata = rollout.metadata as Record<string, unknown>;
    const spec = structuredClone(rollout.spec) as {
      template: { spec: { containers: Array<{ image: string }> } };
    };
    spec.template.spec.containers[0]!.image = image;
    return { ...rollout, metadata: { ...metadata, labels: { 'rollgate.dev/source': 'apps' } }, spec };
  };
  const configMap = (namespace: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace },
    data: { a: '1' },
  });

  it("sends a Rollout's plainly and a built-in kind's through client-node, with client-node's outcome", async () => {
    const kubeConfig = sandboxKubeConfig(sandbox.url, TOKEN);
    const clients = createKubeClients(kubeConfig);
    for (const name of ['sync-plain', 'sync-client-node'])
      await clients.core.createNamespace({ body: { metadata: { name } } });
    const sent = vi.spyOn(PlainKubeHttp.prototype, 'send');
    try {
      const applier = new ObjectApplier(kubeConfig, { source: 'apps', defaultNamespace: 'sync-plain' });
      const results = [
        await applier.applyWithoutRead(preparedRollout('sync-plain', 'app:1.0'), false),
        await applier.applyWithoutRead(preparedRollout('sync-plain', 'app:2.0'), true),
        await applier.apply(preparedRollout('sync-plain', 'app:2.0')),
        await applier.apply(configMap('sync-plain')),
      ];
      expect(results).toEqual(['created', 'updated', 'unchanged', 'created']);
      const applies = sent.mock.calls
        .map(([, request]) => `${request.method} ${request.path}`)
        .filter((request) => request.startsWith('PATCH'));
      expect(applies).toEqual([
        'PATCH /apis/rollgate.dev/v1alpha1/namespaces/sync-plain/rollouts/web?fieldManager=rollgate&force=true',
        'PATCH /apis/rollgate.dev/v1alpha1/namespaces/sync-plain/rollouts/web?fieldManager=rollgate&force=true',
      ]);
    } finally {
      sent.mockRestore();
    }

    // The same two applies through client-node's generic client, as the sync sent them before.
    const generic = KubernetesObjectApi.makeApiClient(kubeConfig);
    for (const image of ['app:1.0', 'app:2.0'])
      await generic.patch(
        preparedRollout('sync-client-node', image),
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        PatchStrategy.ServerSideApply,
      );
    const stored = async (namespace: string) => {
      const live = (await clients.custom.getNamespacedCustomObject({
        ...ROLLOUTS,
        namespace,
        name: 'web',
      })) as {
        metadata: {
          labels?: unknown;
          generation?: number;
          managedFields?: Array<{ manager?: string; operation?: string }>;
        };
        spec: unknown;
      };
      return {
        labels: live.metadata.labels,
        generation: live.metadata.generation,
        managers: live.metadata.managedFields?.map((m) => `${m.manager}/${m.operation}`),
        spec: live.spec,
      };
    };
    const viaPlain = await stored('sync-plain');
    expect(viaPlain).toEqual(await stored('sync-client-node'));
    expect(viaPlain.managers).toEqual(['rollgate/Apply']);
    expect(JSON.stringify(viaPlain.spec)).toContain('app:2.0');
  });
});
