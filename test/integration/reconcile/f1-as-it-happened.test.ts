// F1 in the field's exact configuration, end to end under a whole Rollgate: a Rollout with workloadRef to a Deployment,
// Istio VirtualService + DestinationRule subsets, no canary/stable Services, progressDeadlineAbort, and a canary image
// that cannot be pulled. The deadline and `rollgate abort` (progressing, paused, analysis running) each win within one
// resync: 100 % back on the stable subset (read from the VirtualService), the canary scaled down, ImagePullBackOff named;
// with the router failing every call (no VirtualService) the deadline abort and the scale-down still happen.
// f1-unstartable-canary.test.ts covers the same rules on a fake clock with a failing router; this file adds the Deployment,
// the Istio objects and the real queue, watches and CLI. Real clock: the deadline is 3 s and every wait is bounded.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import { PODS_RESYNC_MS } from '../../../src/rollout/pass/finish-pass.ts';
import { runCli } from '../../support/run-cli.ts';
import { eventually } from '../../support/eventually.ts';
import { istioSubsetRoutesYaml } from '../../support/traffic-routes.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import { startTrafficScene, type LiveRolloutStatus, type TrafficScene } from '../traffic/traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

const DEADLINE_S = 3;
/** "One resync": the longest the planner waits before looking at pods again. */
const RESYNC_MS = PODS_RESYNC_MS;
const ABORT_SCALE_DOWN_S = 1;
const UNPULLABLE = 'sandbox.rollgate.dev/behavior';

interface F1Status extends LiveRolloutStatus {
  abort?: boolean;
  conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
}

let scene: TrafficScene;
let kubeconfig: string;

function istioObjects(ns: string): string {
  return `${istioSubsetRoutesYaml(ns)}---
apiVersion: rollgate.dev/v1alpha1
kind: AnalysisTemplate
metadata: {name: smoke, namespace: ${ns}}
spec:
  metrics:
    - name: smoke
      provider:
        job:
          spec:
            backoffLimit: 0
            template:
              metadata:
                annotations: {sandbox.rollgate.dev/job-duration: 10m}
              spec:
                restartPolicy: Never
                containers: [{name: smoke, image: smoke:1}]
`;
}

function deploymentYaml(ns: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: web, image: web:1}]
`;
}

/** The field's Rollout: no selector, no template, no canary/stable Services. */
function rolloutYaml(ns: string, deadlineSeconds: number): string {
  return `apiVersion: rollgate.dev/v1alpha1
kind: Rollout
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 3
  progressDeadlineSeconds: ${deadlineSeconds}
  progressDeadlineAbort: true
  workloadRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
    scaleDown: onsuccess
  strategy:
    canary:
      scaleDownDelaySeconds: 1
      abortScaleDownDelaySeconds: ${ABORT_SCALE_DOWN_S}
      trafficRouting:
        istio:
          virtualService: {name: web}
          destinationRule: {name: web, canarySubsetName: canary, stableSubsetName: stable}
      steps:
        - setWeight: 20
        - pause: {}
        - analysis:
            templates: [{templateName: smoke}]
        - setWeight: 50
        - pause: {}
`;
}

async function status(ns: string): Promise<F1Status> {
  return ((await scene.status(ns, 'web')) ?? {}) as F1Status;
}

async function waitFor(what: string, ns: string, test: (s: F1Status) => boolean): Promise<F1Status> {
  return (await scene.waitFor(what, ns, 'web', (s) => test(s as F1Status))) as F1Status;
}

/** [stable, canary] subset weights, read back from the VirtualService. */
async function weights(ns: string): Promise<[number | undefined, number | undefined]> {
  const vs = toPlainObject<{
    spec: { http: Array<{ route: Array<{ destination: { subset?: string }; weight?: number }> }> };
  }>(
    await scene.clients.custom.getNamespacedCustomObject({
      group: 'networking.istio.io',
      version: 'v1',
      namespace: ns,
      plural: 'virtualservices',
      name: 'web',
    }),
  );
  const route = vs.spec.http[0]!.route;
  const of = (subset: string) => route.find((d) => d.destination.subset === subset)?.weight;
  return [of('stable'), of('canary')];
}

async function deploymentReplicas(ns: string): Promise<number | undefined> {
  return (await scene.clients.apps.readNamespacedDeployment({ namespace: ns, name: 'web' })).spec?.replicas;
}

/** A new template in the Deployment: the Rollout's next revision (unpullable: the canary never starts). */
async function newDeploymentImage(ns: string, image: string, unpullable: boolean): Promise<void> {
  const template = {
    metadata: {
      annotations: unpullable ? { [UNPULLABLE]: 'image-pull-backoff' } : { [UNPULLABLE]: 'ready' },
    },
    spec: { containers: [{ name: 'web', image }] },
  };
  await scene.kubectl(
    'patch',
    'deployment',
    'web',
    '-n',
    ns,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { template } }),
  );
}

/** A namespace with the Istio objects, the Deployment and its Rollout, healthy on web:1 with the Deployment at 0. */
async function healthyScenario(ns: string, deadlineSeconds: number): Promise<F1Status> {
  await scene.kubectl('create', 'namespace', ns);
  await scene.apply(`${ns}-istio.yaml`, istioObjects(ns));
  await scene.apply(`${ns}-deployment.yaml`, deploymentYaml(ns));
  await scene.apply(`${ns}-rollout.yaml`, rolloutYaml(ns, deadlineSeconds));
  const healthy = await waitFor(`${ns}: first revision healthy`, ns, (s) => s.phase === 'Healthy');
  await expect.poll(() => deploymentReplicas(ns), { timeout: 10_000 }).toBe(0);
  expect(await weights(ns)).toEqual([100, 0]);
  return healthy;
}

/** The canary ReplicaSet (any hash but the stable one) and its spec.replicas. */
async function canaryReplicas(ns: string, stableHash: string): Promise<number | undefined> {
  const sets = await scene.replicaSets(ns);
  return sets.find((rs) => rs.hash !== '' && rs.hash !== stableHash)?.replicas;
}

/** The abort is carried out: Degraded, 100 % on the stable subset, then the canary scaled to 0. */
async function expectAbortCarriedOut(ns: string, stableHash: string, startedAt: number): Promise<F1Status> {
  const degraded = await waitFor(`${ns}: aborted`, ns, (s) => s.phase === 'Degraded' && s.abort === true);
  await expect.poll(() => weights(ns), { timeout: RESYNC_MS }).toEqual([100, 0]);
  const routedBack = Date.now() - startedAt;
  await expect
    .poll(() => canaryReplicas(ns, stableHash), { timeout: ABORT_SCALE_DOWN_S * 1000 + RESYNC_MS })
    .toBe(0);
  expect(routedBack).toBeLessThanOrEqual(RESYNC_MS);
  expect((await status(ns)).stableRS).toBe(stableHash);
  return degraded;
}

async function rollgateAbort(ns: string): Promise<void> {
  const run = await runCli('abort', 'web', '-n', ns, '--kubeconfig', kubeconfig);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
}

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), [
    'networking.istio.io_virtualservices.yaml',
    'networking.istio.io_destinationrules.yaml',
  ]);
  kubeconfig = join(scene.tmp.path, 'kubeconfig');
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)(
  'F1 as it happened: workloadRef + Istio subsets, no Services, an image that cannot be pulled',
  () => {
    it('waits, saying so, for a Deployment that is not there yet, and starts when it appears (the Deployment watch)', async () => {
      const ns = 'f1-missing';
      await scene.kubectl('create', 'namespace', ns);
      await scene.apply(`${ns}-istio.yaml`, istioObjects(ns));
      await scene.apply(`${ns}-rollout.yaml`, rolloutYaml(ns, 600));
      const waiting = await waitFor('InvalidSpec: workloadRef not found', ns, (s) =>
        (s.conditions ?? []).some((c) => c.type === 'InvalidSpec' && c.status === 'True'),
      );
      expect(waiting.message).toMatch(
        /workloadRef not found: Deployment "web" does not exist in namespace "f1-missing"/,
      );
      const events = await eventually('the Warning Event', async () => {
        const list = await scene.clients.core.listNamespacedEvent({ namespace: ns });
        const found = list.items.filter(
          (e) => e.involvedObject.name === 'web' && e.reason === 'WorkloadRefNotFound',
        );
        return found.length > 0 ? found : undefined;
      });
      expect(events[0]!.type).toBe('Warning');
      expect(await scene.replicaSets(ns)).toEqual([]);

      await scene.apply(`${ns}-deployment.yaml`, deploymentYaml(ns));
      const healthy = await waitFor('healthy once the Deployment exists', ns, (s) => s.phase === 'Healthy');
      expect((healthy.conditions ?? []).some((c) => c.type === 'InvalidSpec')).toBe(false);
      // scaleDown: onsuccess hands the Deployment's pods over once the Rollout is Healthy.
      await expect.poll(() => deploymentReplicas(ns), { timeout: 10_000 }).toBe(0);
    }, 60_000);

    it('the progress deadline aborts within the deadline + one resync: stable subset 100 %, canary at 0, ImagePullBackOff named', async () => {
      const ns = 'f1-deadline';
      const healthy = await healthyScenario(ns, DEADLINE_S);
      const stable = healthy.stableRS!;
      await newDeploymentImage(ns, 'web:9.9', true);
      const changedAt = Date.now();
      const degraded = await waitFor('deadline abort', ns, (s) => s.phase === 'Degraded' && s.abort === true);
      expect(Date.now() - changedAt).toBeLessThanOrEqual(DEADLINE_S * 1000 + RESYNC_MS);
      expect(degraded.message).toMatch(/RolloutAborted/);
      expect(degraded.message).toMatch(/ImagePullBackOff/);
      expect(degraded.currentPodHash).not.toBe(stable);
      await expectAbortCarriedOut(ns, stable, Date.now());
      // The Deployment stays at 0: the rollout, not the Deployment, serves the stable version.
      expect(await deploymentReplicas(ns)).toBe(0);
    }, 60_000);

    it('a router that fails every call (its VirtualService gone) holds neither the deadline abort nor the scale-down', async () => {
      const ns = 'f1-no-route';
      const healthy = await healthyScenario(ns, DEADLINE_S);
      const stable = healthy.stableRS!;
      await scene.kubectl('delete', 'virtualservice', 'web', '-n', ns);
      await newDeploymentImage(ns, 'web:9.9', true);
      const changedAt = Date.now();
      const degraded = await waitFor('deadline abort', ns, (s) => s.phase === 'Degraded' && s.abort === true);
      expect(Date.now() - changedAt).toBeLessThanOrEqual(DEADLINE_S * 1000 + RESYNC_MS);
      expect(degraded.message).toMatch(/ImagePullBackOff/);
      await expect
        .poll(() => canaryReplicas(ns, stable), { timeout: ABORT_SCALE_DOWN_S * 1000 + RESYNC_MS })
        .toBe(0);
      const held = await status(ns);
      expect(held.trafficRouterError?.message).toMatch(/VirtualService f1-no-route\/web/);
      expect(held.stableRS).toBe(stable);
    }, 60_000);

    it('rollgate abort while progressing (the canary never starts) takes effect within one resync', async () => {
      const ns = 'f1-progressing';
      const healthy = await healthyScenario(ns, 600);
      const stable = healthy.stableRS!;
      await newDeploymentImage(ns, 'web:9.9', true);
      await waitFor(
        'the canary progressing',
        ns,
        (s) => s.phase === 'Progressing' && s.currentPodHash !== stable,
      );
      await eventually('a canary ReplicaSet', async () => ((await canaryReplicas(ns, stable)) ?? 0) > 0);
      await rollgateAbort(ns);
      const degraded = await expectAbortCarriedOut(ns, stable, Date.now());
      expect(degraded.message).toMatch(/ImagePullBackOff|ErrImagePull/);
    }, 60_000);

    it('rollgate abort while paused takes effect within one resync', async () => {
      const ns = 'f1-paused';
      const healthy = await healthyScenario(ns, 600);
      const stable = healthy.stableRS!;
      await newDeploymentImage(ns, 'web:2', false);
      await waitFor('paused after setWeight 20', ns, (s) => s.phase === 'Paused' && s.currentStepIndex === 1);
      expect(await weights(ns)).toEqual([80, 20]);
      await rollgateAbort(ns);
      await expectAbortCarriedOut(ns, stable, Date.now());
    }, 60_000);

    it('rollgate abort while the analysis runs takes effect within one resync', async () => {
      const ns = 'f1-analysis';
      const healthy = await healthyScenario(ns, 600);
      const stable = healthy.stableRS!;
      await newDeploymentImage(ns, 'web:2', false);
      await waitFor('paused after setWeight 20', ns, (s) => s.phase === 'Paused' && s.currentStepIndex === 1);
      await promoteRollout(scene.clients, { namespace: ns, name: 'web' });
      const waiting = await waitFor(
        'the analysis step waiting for its run',
        ns,
        (s) => s.currentStepIndex === 2,
      );
      const run = /waiting for AnalysisRun (\S+)/.exec(waiting.message ?? '')?.[1];
      expect(run).toBeDefined();
      await eventually('the AnalysisRun running', async () => {
        const found = toPlainObject<{ status?: { phase?: string } }>(
          await scene.clients.custom.getNamespacedCustomObject({
            group: 'rollgate.dev',
            version: 'v1alpha1',
            namespace: ns,
            plural: 'analysisruns',
            name: run!,
          }),
        );
        return found.status?.phase === 'Running';
      });
      await rollgateAbort(ns);
      await expectAbortCarriedOut(ns, stable, Date.now());
    }, 60_000);
  },
);
