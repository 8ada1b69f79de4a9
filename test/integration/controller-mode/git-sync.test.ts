// Controller mode with Rollgate's own Git sync: a process driving only argoproj.io applies a folder's Rollout and AnalysisTemplate in Argo's group (one written as rollgate.dev too) and drives them there.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { recordWatch, type WatchRecording } from '../../conformance/support/watch-recorder.ts';
import { eventually } from '../../support/eventually.ts';
import { deleteKeysUnder } from '../../support/redis-test-prefix.ts';
import { runCli } from '../../support/run-cli.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

const NAMESPACE = 'default';
const STEPS = `        - setWeight: 50
        - pause: {}
        - analysis:
            templates:
              - templateName: success-rate`;

interface LiveRollout {
  apiVersion: string;
  metadata: {
    uid: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { template: { spec: { containers: Array<{ image: string }> } } };
  status?: {
    phase?: string;
    currentStepIndex?: number;
    stableRS?: string;
    currentPodHash?: string;
    pauseConditions?: Array<{ reason?: string }>;
    canary?: { weights?: { canary?: { weight?: number }; stable?: { weight?: number } } };
  };
}

interface LiveRun {
  apiVersion: string;
  metadata: { ownerReferences?: Array<{ apiVersion?: string; kind?: string; uid?: string }> };
  status?: { phase?: string };
}

/** A canary Rollout as a team writes it for Argo Rollouts, in `apiVersion`. */
function rolloutYaml(
  name: string,
  image: string,
  apiVersion = 'argoproj.io/v1alpha1',
  steps = STEPS,
): string {
  return `apiVersion: ${apiVersion}
kind: Rollout
metadata:
  name: ${name}
spec:
  replicas: 2
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
        - name: app
          image: ${image}
  strategy:
    canary:
      scaleDownDelaySeconds: 0
      steps:
${steps}
`;
}

function templateYaml(name: string, url: string, apiVersion = 'argoproj.io/v1alpha1'): string {
  return `apiVersion: ${apiVersion}
kind: AnalysisTemplate
metadata:
  name: ${name}
spec:
  metrics:
    - name: rate
      count: 1
      successCondition: result >= 0.95
      provider:
        web:
          url: ${url}
          jsonPath: '{$.rate}'
`;
}

let scene: SystemScene;
let metricServer: Server;
let metricUrl = '';
/** Every rollgate.dev Rollout, AnalysisTemplate and AnalysisRun event from before Rollgate starts. */
const rollgateWatches: WatchRecording[] = [];

async function readIn<T>(group: string, plural: string, name: string): Promise<T | undefined> {
  try {
    return toPlainObject<T>(
      await scene.clients.custom.getNamespacedCustomObject({
        group,
        version: 'v1alpha1',
        namespace: NAMESPACE,
        plural,
        name,
      }),
    );
  } catch {
    return undefined;
  }
}

async function listIn<T>(group: string, plural: string): Promise<T[]> {
  const list = toPlainObject<{ items: T[] }>(
    await scene.clients.custom.listNamespacedCustomObject({
      group,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural,
    }),
  );
  return list.items;
}

const argoRollout = (name: string) => readIn<LiveRollout>('argoproj.io', 'rollouts', name);

const waitForArgoRollout = (what: string, name: string, test: (r: LiveRollout) => boolean) =>
  eventually(
    what,
    async () => {
      const live = await argoRollout(name);
      return live !== undefined && test(live) ? live : undefined;
    },
    { timeoutMs: 45_000, intervalMs: 50 },
  );

const healthy = (notHash?: string) => (r: LiveRollout) =>
  r.status?.phase === 'Healthy' &&
  r.status.stableRS !== undefined &&
  r.status.stableRS === r.status.currentPodHash &&
  r.status.stableRS !== notHash;

const pausedAtStep = (step: number, image: string) => (r: LiveRollout) =>
  r.spec.template.spec.containers[0]?.image === image &&
  r.status?.phase === 'Paused' &&
  r.status.currentStepIndex === step &&
  (r.status.pauseConditions ?? []).length > 0;

/** What rollgate.dev holds of Rollouts and analysis kinds: in an argoproj.io-only process, nothing ever. */
function rollgateEvents(): string[] {
  return rollgateWatches.flatMap((watch) =>
    watch.events.map((e) => `${e.type} ${e.object.kind} ${e.object.metadata?.name}`),
  );
}

async function promote(name: string): Promise<void> {
  const promoted = await runCli(
    'promote',
    name,
    '-n',
    NAMESPACE,
    '--kubeconfig',
    await scene.kubeconfigPath(),
  );
  expect(promoted.stderr).toBe('');
  expect(promoted.stdout).toContain(`rollout ${name} promoted`);
}

async function push(files: Record<string, string>, message: string): Promise<string> {
  const work = scene.workingCopy();
  work.write(files);
  const commit = work.commit(message);
  await work.push(scene.repoUrl());
  return commit;
}

beforeAll(async () => {
  metricServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rate: 0.99 }));
  });
  await new Promise<void>((resolve) => metricServer.listen(0, '127.0.0.1', resolve));
  const address = metricServer.address();
  metricUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/rate`;
  scene = await startSystemScene({
    name: 'ctl-git',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: { readyDelayMs: 50 } },
    repositories: ['apps'],
    deleteRedisKeys: true,
    prepare: async (s) => {
      // Rollgate's own CRDs are there before it starts (it installs them at start as always), so the
      // watches below see every rollgate.dev object from the first sync on.
      await installCrds(s.clients, rollgateCrds());
      for (const plural of ['rollouts', 'analysistemplates', 'analysisruns'])
        rollgateWatches.push(await recordWatch(s.kubeConfig, `/apis/rollgate.dev/v1alpha1/${plural}`, {}));
      s.defer(() => rollgateWatches.splice(0).forEach((w) => w.stop()));
    },
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
  // The argoproj.io reconciler's queue lives under its own prefix, beside the scene's.
  if (scene) {
    const redis = createRedisConnection(inject('redisUrl'));
    await deleteKeysUnder(redis, `${scene.redis.prefix}.argoproj.io`).finally(() => redis.disconnect());
  }
  await new Promise<void>((resolve) => metricServer?.close(() => resolve()));
});

describe('controller mode with Git sync (controller.groups: [argoproj.io], a source)', () => {
  it("applies and drives a folder of argoproj.io objects in Argo's group; a file written as rollgate.dev is moved there too", async () => {
    const first = await push(
      {
        'apps/web.yaml': rolloutYaml('web', 'shop/web:1'),
        'apps/success-rate.yaml': templateYaml('success-rate', metricUrl),
        // Outside the source's folder: never applied.
        'other/stray.yaml': rolloutYaml('stray', 'shop/stray:1'),
      },
      'web and its analysis',
    );
    const rollgate = await scene.startRollgate({
      config: {
        controller: { groups: ['argoproj.io'] },
        sources: [{ name: 'apps', url: scene.repoUrl(), branch: 'main', path: 'apps', interval: '1s' }],
      },
    });
    expect(rollgate.config.controller.groups).toEqual(['argoproj.io']);

    // Revision 1: applied by the sync as Argo's Rollout, Healthy at once (a first revision has no canary).
    const v1 = await waitForArgoRollout('web applied in argoproj.io and Healthy', 'web', healthy());
    expect(v1.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(v1.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'rollgate',
      'rollgate.dev/source': 'apps',
    });
    expect(v1.metadata.annotations?.['rollgate.dev/file']).toBe('apps/web.yaml');
    expect(v1.metadata.annotations?.['rollgate.dev/commit']).toBe(first);
    const template = await readIn<{ apiVersion: string }>('argoproj.io', 'analysistemplates', 'success-rate');
    expect(template?.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(await argoRollout('stray')).toBeUndefined();

    // Revision 2 from a push: the canary pauses at its pause step, `rollgate promote` resumes it, the
    // analysis step measures through the synced template (an argoproj.io run owned by the Rollout).
    await push({ 'apps/web.yaml': rolloutYaml('web', 'shop/web:2') }, 'web 2');
    const paused = await waitForArgoRollout('web 2 paused at step 1', 'web', pausedAtStep(1, 'shop/web:2'));
    expect(paused.status?.currentPodHash).not.toBe(v1.status?.stableRS);
    expect(paused.status?.stableRS).toBe(v1.status?.stableRS);
    expect(paused.status?.canary?.weights?.canary?.weight).toBe(50);
    expect(paused.status?.canary?.weights?.stable?.weight).toBe(50);
    await promote('web');
    const v2 = await waitForArgoRollout('web 2 Healthy', 'web', healthy(v1.status?.stableRS));
    expect(v2.status?.currentPodHash).toBe(paused.status?.currentPodHash);
    expect(v2.status?.currentStepIndex).toBe(3);
    const runs = await listIn<LiveRun>('argoproj.io', 'analysisruns');
    expect(runs.map((r) => r.status?.phase)).toEqual(['Successful']);
    expect(runs[0]?.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(runs[0]?.metadata.ownerReferences?.[0]).toMatchObject({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      uid: v1.metadata.uid,
    });
    const replicaSets = await scene.clients.apps.listNamespacedReplicaSet({
      namespace: NAMESPACE,
      labelSelector: 'app=web',
    });
    for (const rs of replicaSets.items)
      expect(rs.metadata?.ownerReferences?.[0]).toMatchObject({
        apiVersion: 'argoproj.io/v1alpha1',
        uid: v1.metadata.uid,
      });

    // Revision 3 from another push: a second canary, the same way.
    await push({ 'apps/web.yaml': rolloutYaml('web', 'shop/web:3') }, 'web 3');
    const paused3 = await waitForArgoRollout('web 3 paused at step 1', 'web', pausedAtStep(1, 'shop/web:3'));
    expect(paused3.status?.stableRS).toBe(v2.status?.stableRS);
    await promote('web');
    const v3 = await waitForArgoRollout('web 3 Healthy', 'web', healthy(v2.status?.stableRS));
    expect(v3.metadata.uid).toBe(v1.metadata.uid);
    expect((await listIn<LiveRun>('argoproj.io', 'analysisruns')).map((r) => r.status?.phase)).toEqual([
      'Successful',
      'Successful',
    ]);

    // A Rollout and a template written as rollgate.dev/v1alpha1 in Git: applied in argoproj.io
    // (docs/controller-mode.md, "The sync"), driven there; its analysis step finds the moved template.
    const moved = await push(
      {
        'apps/api.yaml': [
          templateYaml('api-rate', metricUrl, 'rollgate.dev/v1alpha1'),
          rolloutYaml(
            'api',
            'shop/api:1',
            'rollgate.dev/v1alpha1',
            `        - setWeight: 50
        - analysis:
            templates:
              - templateName: api-rate`,
          ),
        ].join('---\n'),
      },
      'api, written for Rollgate',
    );
    const api1 = await waitForArgoRollout('api applied in argoproj.io and Healthy', 'api', healthy());
    expect(api1.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(api1.metadata.annotations?.['rollgate.dev/commit']).toBe(moved);
    expect(
      (await readIn<{ apiVersion: string }>('argoproj.io', 'analysistemplates', 'api-rate'))?.apiVersion,
    ).toBe('argoproj.io/v1alpha1');
    await push(
      {
        'apps/api.yaml': [
          templateYaml('api-rate', metricUrl, 'rollgate.dev/v1alpha1'),
          rolloutYaml(
            'api',
            'shop/api:2',
            'rollgate.dev/v1alpha1',
            `        - setWeight: 50
        - analysis:
            templates:
              - templateName: api-rate`,
          ),
        ].join('---\n'),
      },
      'api 2',
    );
    await waitForArgoRollout('api 2 Healthy through its analysis', 'api', healthy(api1.status?.stableRS));
    const apiRuns = (await listIn<LiveRun>('argoproj.io', 'analysisruns')).filter(
      (r) => r.metadata.ownerReferences?.[0]?.uid === api1.metadata.uid,
    );
    expect(apiRuns.map((r) => r.status?.phase)).toEqual(['Successful']);

    // Nothing, at any moment, in Rollgate's group.
    expect(rollgateEvents()).toEqual([]);
    expect(await listIn('rollgate.dev', 'rollouts')).toEqual([]);
    expect(await listIn('rollgate.dev', 'analysistemplates')).toEqual([]);
    expect(await listIn('rollgate.dev', 'analysisruns')).toEqual([]);
  }, 180_000);
});
