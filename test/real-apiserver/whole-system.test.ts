// Rollgate as a user runs it, against a real kube-apiserver (npm run test:real-apiserver): one Git
// repository, one Rollgate reaching the server as the ServiceAccount deploy/ creates (its RBAC enforced),
// and the rollouts a user meets first: a new revision superseding one mid-canary while another writer
// keeps changing the objects, a canary that cannot pull its image, analysis by a Job, prune.
import { join } from 'node:path';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPlainObject } from '../../src/kube/client.ts';
import { eventually } from '../support/eventually.ts';
import {
  openGitopsScene,
  type GitopsScene,
  type LiveRollout,
  type RollgateInScene,
} from './support/gitops-scene.ts';
import { canaryRollout, configMap, jobAnalysisTemplate } from '../support/gitops-manifests.ts';
import { connectRealCluster, type RealCluster } from './support/real-cluster.ts';
import {
  auditedRequests,
  forbiddenRequests,
  installAsServiceAccount,
  type ServiceAccountCredentials,
} from './support/service-account.ts';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const SOURCE = `whole-${process.pid}`;

let cluster: RealCluster;
let scene: GitopsScene;
let rollgate: RollgateInScene;
let startedAt: Date;
let serviceAccount: ServiceAccountCredentials;

/** Steps that hold a revision mid-canary until a newer one supersedes it. */
const HOLD = [{ setWeight: 34 }, { pause: {} }];
const QUICK = [{ setWeight: 34 }, { pause: { duration: '1s' } }];

const deadline = (image: string, behavior?: string): string =>
  canaryRollout({
    name: 'stuck',
    image,
    spec: { progressDeadlineSeconds: 8, progressDeadlineAbort: true },
    ...(behavior ? { podAnnotations: { 'sandbox.rollgate.dev/behavior': behavior } } : {}),
  });

const judged = (name: string, image: string, template: string): string =>
  canaryRollout({
    name,
    image,
    steps: [{ setWeight: 50 }, { analysis: { templates: [{ templateName: template }] } }],
  });

async function healthy(name: string, what = `${name} healthy`): Promise<LiveRollout> {
  return eventually(
    what,
    async () => {
      const live = await scene.rollout(name);
      if (live?.status?.phase === 'Healthy' && live.status.stableRS === live.status.currentPodHash)
        return live;
      // What it saw, so a timeout says where the rollout stood.
      throw new Error(
        `${name}: ${JSON.stringify(live?.status)}; source ${JSON.stringify(await scene.sourceStatus(SOURCE))}`,
      );
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

beforeAll(async () => {
  cluster = connectRealCluster();
  scene = await openGitopsScene(cluster, 'rollgate-whole');
  serviceAccount = await installAsServiceAccount(cluster, join(scene.tmp.path, 'rollgate.kubeconfig'));
  await scene.push(
    {
      'supersede.yaml': canaryRollout({ name: 'supersede', image: 'web:1', replicas: 3, steps: HOLD }),
      'stuck.yaml': deadline('api:1'),
      'judged-ok.yaml': judged('judged-ok', 'shop:1', 'smoke-passes'),
      'judged-bad.yaml': judged('judged-bad', 'cart:1', 'smoke-fails'),
      'analysis.yaml': `${jobAnalysisTemplate('smoke-passes', 'succeed')}---\n${jobAnalysisTemplate('smoke-fails', 'fail')}`,
      'config/keep.yaml': configMap('keep', { colour: 'blue' }),
      'config/drop.yaml': configMap('drop', { colour: 'red' }),
    },
    'first revisions',
  );
  startedAt = new Date();
  rollgate = await scene.startRollgate({
    source: SOURCE,
    prune: true,
    kubeConfig: serviceAccount.kubeConfig,
  });
  await Promise.all(['supersede', 'stuck', 'judged-ok', 'judged-bad'].map((name) => healthy(name)));
}, 180_000);

afterAll(async () => {
  await scene?.stop();
});

describe('the whole system on a real API server, as the ServiceAccount of deploy/', () => {
  it('supersedes a revision mid-canary with a newer one while another writer makes its writes conflict', async () => {
    const rev1 = (await scene.rollout('supersede'))?.status?.stableRS;
    await scene.push(
      { 'supersede.yaml': canaryRollout({ name: 'supersede', image: 'web:2', replicas: 3, steps: HOLD }) },
      'web 2',
    );
    await eventually(
      'web:2 mid-canary, held at its pause',
      async () => {
        const live = await scene.rollout('supersede');
        if (live?.status?.currentStepIndex === 1 && (await scene.readyPods('supersede', 'web:2')) >= 1)
          return true;
        throw new Error(await scene.describe('supersede'));
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );

    // Another writer (a label controller, a person with kubectl annotate) keeps changing the Rollout and
    // its ReplicaSets: every write Rollgate makes from an older read is answered 409. The ReplicaSets
    // are touched every tenth round only: the real ReplicaSet controller writes their status with a
    // resourceVersion too, and a patch every 20 ms starved it (its status updates lost every race for
    // minutes, so readyReplicas never moved; no cluster sees that from Rollgate's side alone).
    let poking = true;
    let pokes = 0;
    const poke = async (): Promise<void> => {
      while (poking) {
        const body = { metadata: { annotations: { 'example.com/poked': String(++pokes) } } };
        await Promise.allSettled([
          cluster.clients.custom.patchNamespacedCustomObject(
            {
              group: 'rollgate.dev',
              version: 'v1alpha1',
              namespace: scene.namespace,
              plural: 'rollouts',
              name: 'supersede',
              body,
            },
            MERGE_PATCH,
          ),
          ...(pokes % 10 === 0 ? await scene.replicaSets('supersede') : []).map((rs) =>
            cluster.clients.apps.patchNamespacedReplicaSet(
              { namespace: scene.namespace, name: rs.name, body },
              MERGE_PATCH,
            ),
          ),
        ]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const poker = poke();
    try {
      await scene.push(
        { 'supersede.yaml': canaryRollout({ name: 'supersede', image: 'web:3', replicas: 3, steps: QUICK }) },
        'web 3',
      );
      const done = await eventually(
        'web:3 promoted',
        async () => {
          const live = await scene.rollout('supersede');
          return live?.status?.phase === 'Healthy' &&
            live.status.stableRS !== rev1 &&
            live.status.stableRS === live.status.currentPodHash &&
            (await scene.readyPods('supersede', 'web:3')) === 3
            ? live
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      expect(done.spec?.template?.spec?.containers?.[0]?.image).toBe('web:3');
    } finally {
      poking = false;
      await poker;
    }
    // The conflicts happened and were absorbed by re-reading.
    const conflicts = (await rollgate.metrics.conflictsRetriedTotal.get()).values.reduce(
      (sum, v) => sum + v.value,
      0,
    );
    expect(conflicts).toBeGreaterThan(0);
    expect(pokes).toBeGreaterThan(10);
    // One ReplicaSet per revision, never two for the same template; only web:3 runs.
    const sets = await scene.replicaSets('supersede');
    expect(new Set(sets.map((rs) => rs.podTemplateHash)).size).toBe(sets.length);
    expect(sets.map((rs) => rs.image).sort()).toEqual([...new Set(sets.map((rs) => rs.image))].sort());
    // The older ReplicaSets are scaled down in the passes after the promotion (scaleDownDelaySeconds 0).
    await eventually(
      'only web:3 running',
      async () => {
        const running = (await scene.replicaSets('supersede')).filter((rs) => rs.replicas > 0);
        if (running.length === 1 && running[0]?.image === 'web:3') return true;
        throw new Error(`running: ${JSON.stringify(running)}`);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(await scene.readyPods('supersede', 'web:3')).toBe(3);
  }, 240_000);

  it('aborts a canary that cannot pull its image at the progress deadline, back to the stable pods', async () => {
    const stable = (await scene.rollout('stuck'))?.status?.stableRS;
    await scene.push({ 'stuck.yaml': deadline('api:2', 'image-pull-backoff') }, 'api 2 (unpullable)');
    const aborted = await eventually(
      'the canary aborted',
      async () => {
        const live = await scene.rollout('stuck');
        return live?.status?.phase === 'Degraded' ? live : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(aborted.status?.abort).toBe(true);
    expect(aborted.status?.stableRS).toBe(stable);
    expect(aborted.status?.message).toMatch(/ProgressDeadlineExceeded/);
    expect(aborted.status?.message).toMatch(/ImagePullBackOff|ErrImagePull/);
    const progressing = aborted.status?.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing?.reason).toBe('ProgressDeadlineExceeded');
    await eventually(
      'the canary scaled to zero, the stable pods serving',
      async () => {
        const sets = await scene.replicaSets('stuck');
        const canary = sets.find((rs) => rs.image === 'api:2');
        return canary?.replicas === 0 && (await scene.readyPods('stuck', 'api:1')) === 2;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  }, 120_000);

  it('runs analysis Jobs on the real Job controller: a succeeding one promotes, a failing one aborts', async () => {
    const before = {
      ok: (await scene.rollout('judged-ok'))?.status?.stableRS,
      bad: (await scene.rollout('judged-bad'))?.status?.stableRS,
    };
    await scene.push(
      {
        'judged-ok.yaml': judged('judged-ok', 'shop:2', 'smoke-passes'),
        'judged-bad.yaml': judged('judged-bad', 'cart:2', 'smoke-fails'),
      },
      'shop 2 and cart 2',
    );
    const promoted = await eventually(
      'shop:2 promoted after its analysis',
      async () => {
        const live = await scene.rollout('judged-ok');
        return live?.status?.phase === 'Healthy' && live.status.stableRS !== before.ok ? live : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(promoted.spec?.template?.spec?.containers?.[0]?.image).toBe('shop:2');
    const aborted = await eventually(
      'cart:2 aborted by its analysis',
      async () => {
        const live = await scene.rollout('judged-bad');
        return live?.status?.phase === 'Degraded' ? live : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(aborted.status?.abort).toBe(true);
    expect(aborted.status?.stableRS).toBe(before.bad);

    const runs = toPlainObject<{ items: AnalysisRun[] }>(
      await cluster.clients.custom.listNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: scene.namespace,
        plural: 'analysisruns',
      }),
    ).items;
    const phaseOf = (rollout: string): Array<string | undefined> =>
      runs
        .filter((r) => r.metadata?.ownerReferences?.some((o) => o.name === rollout))
        .map((r) => r.status?.phase);
    expect(phaseOf('judged-ok')).toEqual(['Successful']);
    expect(phaseOf('judged-bad')).toEqual(['Failed']);
    // The Jobs ran to their end on the real Job controller (the kubelet stand-in ended their pods).
    const bad = runs.find((r) => r.metadata?.ownerReferences?.some((o) => o.name === 'judged-bad'));
    expect(bad?.status?.metricResults?.[0]?.measurements?.at(-1)?.message).toMatch(/failed/i);
  }, 180_000);

  it('prunes an object removed from Git and keeps one Rollgate never applied', async () => {
    await cluster.clients.core.createNamespacedConfigMap({
      namespace: scene.namespace,
      body: { metadata: { name: 'hand-made' }, data: { by: 'kubectl' } },
    });
    const dropped = await scene.push({ 'config/drop.yaml': null }, 'drop the red config');
    await eventually(
      'drop pruned',
      () =>
        cluster.clients.core.readNamespacedConfigMap({ namespace: scene.namespace, name: 'drop' }).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // The status of that commit: the prune is done a moment before it is written, and until then the
    // status still tells of the commit before.
    const status = await eventually('the source synced', async () => {
      const s = await scene.sourceStatus(SOURCE);
      return s?.phase === 'Synced' && s.commit === dropped ? s : undefined;
    });
    expect(status.message).toMatch(/1 pruned/);
    const keep = await cluster.clients.core.readNamespacedConfigMap({
      namespace: scene.namespace,
      name: 'keep',
    });
    expect(keep.data).toEqual({ colour: 'blue' });
    const handMade = await cluster.clients.core.readNamespacedConfigMap({
      namespace: scene.namespace,
      name: 'hand-made',
    });
    expect(handMade.data).toEqual({ by: 'kubectl' });
  }, 60_000);

  it('did all of the above with the permissions deploy/ grants: not one request refused', () => {
    const requests = auditedRequests({ since: startedAt });
    // The audit log saw Rollgate's identity (syncing, watching, reconciling, running Jobs)…
    expect(requests.length).toBeGreaterThan(100);
    expect(requests.some((r) => r.verb === 'create' && r.requestURI.includes('/jobs'))).toBe(true);
    // …and the server refused none of it.
    expect(forbiddenRequests({ since: startedAt })).toEqual([]);
  });

  it('would have seen a refusal: a request deploy/ does not grant is in the audit log as a 403', async () => {
    const since = new Date();
    const custom = serviceAccount.kubeConfig.makeApiClient(CustomObjectsApi);
    const target = {
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: scene.namespace,
      plural: 'rollouts',
    };
    const live = await custom.getNamespacedCustomObject({ ...target, name: 'supersede' });
    // Rollgate writes Rollouts by apply (patch) and their status by update: a plain update is not granted.
    await expect(
      custom.replaceNamespacedCustomObject({ ...target, name: 'supersede', body: live }),
    ).rejects.toMatchObject({
      code: 403,
    });
    expect(
      await eventually(
        'the refusal audited',
        () => forbiddenRequests({ since }).length > 0 && forbiddenRequests({ since }),
      ),
    ).toEqual([`update /apis/rollgate.dev/v1alpha1/namespaces/${scene.namespace}/rollouts/supersede`]);
  });
});

interface AnalysisRun {
  metadata?: { ownerReferences?: Array<{ name?: string }> };
  status?: { phase?: string; metricResults?: Array<{ measurements?: Array<{ message?: string }> }> };
}
