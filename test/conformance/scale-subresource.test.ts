// Conformance: the /scale subresource of Rollgate's Rollout CRD (what an HPA and `kubectl scale` use).
import { ApiextensionsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollgateCrds } from '../../src/manifest/crds.ts';
import { failure } from './support/conformance-cluster.ts';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';

const cluster = useConformanceCluster();

/** Rollgate's Rollout CRD as `rollgate install` writes it, moved to a group of its own for this run. */
interface Crd {
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: Array<{ subresources?: unknown }> };
}
let crd: Crd;

beforeAll(async () => {
  const rollouts = (rollgateCrds() as Crd[]).find((c) => c.spec.names.plural === 'rollouts');
  if (!rollouts) throw new Error('no Rollout CRD');
  const group = `${cluster.unique('scale')}.rollgate.dev`;
  crd = { ...rollouts, metadata: { name: `rollouts.${group}` }, spec: { ...rollouts.spec, group } };
  // Applied as `rollgate install` applies it: a typed create would drop the schema's x-kubernetes-* keys
  // (client-node serializes CRDs through its model), and the API server would then prune status away.
  await cluster.kubeConfig.makeApiClient(ApiextensionsV1Api).patchCustomResourceDefinition(
    {
      name: crd.metadata.name,
      body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd },
      fieldManager: 'rollgate-conformance',
      force: true,
    },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
  await cluster.eventually(async () => {
    const live = (await cluster.objects.read({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crd.metadata.name },
    })) as { status?: { conditions?: Array<{ type: string; status: string }> } };
    return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
      ? true
      : undefined;
  });
});

afterAll(async () => {
  await cluster.objects
    .delete({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crd.metadata.name },
    })
    .catch(() => undefined);
});

const rollouts = () => ({
  group: crd.spec.group,
  version: 'v1alpha1',
  namespace: cluster.namespace,
  plural: 'rollouts',
});
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

interface Scale {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

interface LiveRollout {
  metadata: { resourceVersion: string; generation: number };
  spec: { replicas: number };
  status?: { HPAReplicas?: number; selector?: string };
}

async function createRollout(name: string, replicas: number): Promise<void> {
  await cluster.custom.createNamespacedCustomObject({
    ...rollouts(),
    body: {
      apiVersion: `${crd.spec.group}/v1alpha1`,
      kind: 'Rollout',
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }] } },
      },
    },
  });
}

/** What Rollgate's planner writes: the pods the rollout has, and the selector an HPA counts them by. */
async function writeStatus(name: string, status: { HPAReplicas: number; selector: string }): Promise<void> {
  await cluster.custom.patchNamespacedCustomObjectStatus(
    { ...rollouts(), name, body: { status: { ...status, replicas: status.HPAReplicas } } },
    MERGE_PATCH,
  );
}

const getScale = async (name: string): Promise<Scale> =>
  (await cluster.custom.getNamespacedCustomObjectScale({ ...rollouts(), name })) as Scale;
const getRollout = async (name: string): Promise<LiveRollout> =>
  (await cluster.custom.getNamespacedCustomObject({ ...rollouts(), name })) as LiveRollout;

describe('scale subresource of the Rollout CRD', () => {
  it('declares the paths an HPA reads', () => {
    expect(crd.spec.versions[0]?.subresources).toMatchObject({
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.HPAReplicas',
        labelSelectorPath: '.status.selector',
      },
    });
  });

  it('reads spec.replicas, and status.replicas 0 without a selector before any status is written', async () => {
    await createRollout('fresh', 3);
    const scale = await getScale('fresh');
    expect(scale).toMatchObject({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'fresh', namespace: cluster.namespace },
      spec: { replicas: 3 },
      status: { replicas: 0 },
    });
    expect(scale.status.selector ?? '').toBe('');
    expect(scale.metadata.resourceVersion).toBe((await getRollout('fresh')).metadata.resourceVersion);
  });

  it('reports status.HPAReplicas as status.replicas and status.selector as the selector', async () => {
    await createRollout('counted', 4);
    await writeStatus('counted', { HPAReplicas: 4, selector: 'app=counted' });
    expect((await getScale('counted')).status).toEqual({ replicas: 4, selector: 'app=counted' });
  });

  it('PATCH (merge and JSON patch) changes spec.replicas only, as a spec change', async () => {
    await createRollout('patched', 2);
    await writeStatus('patched', { HPAReplicas: 2, selector: 'app=patched' });
    const patched = (await cluster.custom.patchNamespacedCustomObjectScale(
      { ...rollouts(), name: 'patched', body: { spec: { replicas: 5 } } },
      MERGE_PATCH,
    )) as Scale;
    expect(patched).toMatchObject({ kind: 'Scale', spec: { replicas: 5 }, status: { replicas: 2 } });
    let live = await getRollout('patched');
    expect(live.spec.replicas).toBe(5);
    expect(live.status).toMatchObject({ HPAReplicas: 2, selector: 'app=patched' });
    expect(live.metadata.generation).toBe(2);
    expect(patched.metadata.resourceVersion).toBe(live.metadata.resourceVersion);

    await cluster.custom.patchNamespacedCustomObjectScale(
      { ...rollouts(), name: 'patched', body: [{ op: 'replace', path: '/spec/replicas', value: 6 }] },
      JSON_PATCH,
    );
    live = await getRollout('patched');
    expect(live.spec.replicas).toBe(6);
    expect(live.metadata.generation).toBe(3);
  });

  it('PUT honours the resourceVersion it carries: a stale one is a 409, none or the current one writes', async () => {
    await createRollout('replaced', 1);
    const before = await getScale('replaced');
    await cluster.custom.patchNamespacedCustomObjectScale(
      { ...rollouts(), name: 'replaced', body: { spec: { replicas: 2 } } },
      MERGE_PATCH,
    );
    const stale = await failure(
      cluster.custom.replaceNamespacedCustomObjectScale({
        ...rollouts(),
        name: 'replaced',
        body: { ...before, spec: { replicas: 7 } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.status.reason).toBe('Conflict');
    expect((await getRollout('replaced')).spec.replicas).toBe(2);

    const current = await getScale('replaced');
    const written = (await cluster.custom.replaceNamespacedCustomObjectScale({
      ...rollouts(),
      name: 'replaced',
      body: { ...current, spec: { replicas: 3 } },
    })) as Scale;
    expect(written.spec.replicas).toBe(3);
    expect(written.metadata.resourceVersion).not.toBe(current.metadata.resourceVersion);

    const { resourceVersion: _dropped, ...unversioned } = written.metadata;
    await cluster.custom.replaceNamespacedCustomObjectScale({
      ...rollouts(),
      name: 'replaced',
      body: { ...written, metadata: unversioned, spec: { replicas: 4 } },
    });
    expect((await getRollout('replaced')).spec.replicas).toBe(4);
  });

  it('refuses negative replicas with 422 and answers 404 for a missing rollout', async () => {
    await createRollout('bounded', 1);
    const negative = await failure(
      cluster.custom.patchNamespacedCustomObjectScale(
        { ...rollouts(), name: 'bounded', body: { spec: { replicas: -1 } } },
        MERGE_PATCH,
      ),
    );
    expect(negative.code).toBe(422);
    expect((await getRollout('bounded')).spec.replicas).toBe(1);
    expect((await failure(getScale('missing'))).code).toBe(404);
  });
});
