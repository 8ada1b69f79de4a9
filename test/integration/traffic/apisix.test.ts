// End to end, APISIX: a whole Rollgate walks an ApisixRoute's weighted rule 20 → 50 → 100, back to stable on abort,
// puts a hand edit back at the next resync, holds a rollout whose ApisixRoute is missing, leaves the route on stable
// when the Rollout is deleted; Argo's apisix example runs as written (its header route beside setCanaryScale).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { abortRollout, promoteRollout } from '../../../src/views/rollout-commands.ts';
import { runCli } from '../../support/run-cli.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import {
  abortRoutesBackFirst,
  deletedRolloutLeavesStable,
  deployRoutedRollout,
  heldWhileRouteMissing,
  pausedAt,
  recordChanges,
  setImage,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);
const examples = upstreamCorpus('argo-rollouts/examples', import.meta.filename);

const NS = 'apisix';
/** Short, so the drift test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;

// As Argo's docs have users write it: no weights (Argo CD stays in sync); a second rule is someone else's.
const apisixRouteYaml = (namespace: string) => `apiVersion: apisix.apache.org/v2
kind: ApisixRoute
metadata:
  name: web-route
  namespace: ${namespace}
spec:
  http:
    - name: web
      match:
        paths: ["/*"]
        hosts: [shop.example]
      backends:
        - serviceName: web-stable
          servicePort: 80
        - serviceName: web-canary
          servicePort: 80
    - name: docs
      match:
        paths: ["/docs/*"]
      backends:
        - serviceName: docs
          servicePort: 8080
`;

const ROUTING = `apisix:
  route:
    name: web-route
    rules: [web]
`;

interface Backend {
  serviceName: string;
  servicePort: number | string;
  weight?: number;
}
interface HttpRule {
  name: string;
  priority?: number;
  match?: { paths?: string[]; exprs?: unknown[] };
  backends: Backend[];
}

let scene: TrafficScene;

async function rules(namespace: string, name = 'web-route'): Promise<HttpRule[]> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'apisix.apache.org',
    version: 'v2',
    namespace,
    plural: 'apisixroutes',
    name,
  });
  return toPlainObject<{ spec: { http: HttpRule[] } }>(found).spec.http;
}

/** [stable, canary] weights of rule `rule`, as read back from the ApisixRoute. */
const weightsIn = (
  namespace: string,
  names = { route: 'web-route', rule: 'web', stable: 'web-stable', canary: 'web-canary' },
): RouteReadBack<[number | undefined, number | undefined]> => ({
  async read() {
    const rule = (await rules(namespace, names.route)).find((r) => r.name === names.rule);
    const weightOf = (service: string) => rule?.backends.find((b) => b.serviceName === service)?.weight;
    return [weightOf(names.stable), weightOf(names.canary)];
  },
  at: (canary) => [100 - canary, canary],
});
const weights = weightsIn(NS);

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['apisix.apache.org_apisixroutes.yaml'], {
    workers: { resyncMs: RESYNC_MS },
  });
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: apisixRouteYaml(NS) });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('APISIX ApisixRoute under a whole Rollgate', () => {
  it('weights the rule 100/0 at rest and walks it 20 → 50 → 100, then back to the new stable', async () => {
    expect(await weights.read()).toEqual([100, 0]);
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights);
    expect(done.trafficRouterError).toBeUndefined();
    const list = await rules(NS);
    expect(list.map((r) => r.name)).toEqual(['web', 'docs']);
    expect(list[1]).toEqual({
      name: 'docs',
      match: { paths: ['/docs/*'] },
      backends: [{ serviceName: 'docs', servicePort: 8080 }],
    });
  }, 60_000);

  it('abort at 50 % sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/apisix.apache.org/v2/namespaces/${NS}/apisixroutes`,
      routedBack: (object) =>
        (object as { spec: { http: HttpRule[] } }).spec.http[0]!.backends.find(
          (b) => b.serviceName === 'web-canary',
        )?.weight === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a hand edit of the weights is put back at the next resync, with an Event', async () => {
    const ns = 'apisix-drift';
    const drift = weightsIn(ns);
    await deployRoutedRollout(scene, {
      namespace: ns,
      trafficRouting: ROUTING,
      objects: apisixRouteYaml(ns),
    });
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after setWeight 20', ns, 'web', pausedAt(1));
    expect(await drift.read()).toEqual([80, 20]);
    await scene.kubectl(
      'patch',
      'apisixroutes.apisix.apache.org',
      'web-route',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/http/0/backends/0/weight","value":0},' +
        '{"op":"replace","path":"/spec/http/0/backends/1/weight","value":100}]',
    );
    // Not read back here: the resync (every RESYNC_MS) may already have put it back by then. The
    // TrafficDriftCorrected Event below says the edit landed and was corrected.
    // Nothing watched changed (routes are not watched): only the periodic resync can bring the fix.
    await expect.poll(() => drift.read(), { timeout: RESYNC_MS + 10_000 }).toEqual([80, 20]);
    await expect
      .poll(
        async () =>
          (await scene.clients.core.listNamespacedEvent({ namespace: ns })).items
            .filter((e) => e.reason === 'TrafficDriftCorrected')
            .map((e) => e.message),
        { timeout: 10_000 },
      )
      .toEqual([
        `ApisixRoute ${ns}/web-route: weights edited outside Rollgate; set back to Rollgate's (canary 20)`,
      ]);
    expect((await scene.status(ns, 'web'))?.currentStepIndex).toBe(1);
    // `rollgate status` reads the same weights back from the route.
    const shown = await runCli('status', 'web', '-n', ns, '--kubeconfig', join(scene.tmp.path, 'kubeconfig'));
    expect(shown.stdout).toContain(`ApisixRoute ${ns}/web-route rule web: canary 20% / stable 80%`);
  }, 60_000);

  it('a deleted ApisixRoute holds the canary with a message naming it; once back, it goes on', async () => {
    const ns = 'apisix-broken';
    await deployRoutedRollout(scene, {
      namespace: ns,
      trafficRouting: ROUTING,
      objects: apisixRouteYaml(ns),
    });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () =>
        void (await scene.kubectl('delete', 'apisixroutes.apisix.apache.org', 'web-route', '-n', ns)),
      restore: () => scene.apply('broken-apisix.yaml', apisixRouteYaml(ns)),
      message: `ApisixRoute ${ns}/web-route: metadata.name: not found`,
    });
    expect(await weightsIn(ns).read()).toEqual([80, 20]);
  }, 60_000);

  it('deleting the Rollout leaves the ApisixRoute in place, all on stable', async () => {
    await deletedRolloutLeavesStable(scene, NS, weights);
    expect((await rules(NS)).map((r) => r.name)).toEqual(['web', 'docs']);
  }, 60_000);
});

describe.skipIf(crds.missing || examples.missing)("Argo's examples/apisix under a whole Rollgate", () => {
  const ns = 'apisix-example';
  const file = (name: string) => join(examples.folder, 'apisix', name);
  const names = {
    route: 'rollouts-apisix-route',
    rule: 'rollouts-apisix',
    stable: 'rollout-apisix-canary-stable',
    canary: 'rollout-apisix-canary-canary',
  };
  const key = { namespace: ns, name: 'rollout-apisix-canary' };
  const pausedAtStep = (step: number) => (s: { phase?: string; currentStepIndex?: number }) =>
    s.phase === 'Paused' && s.currentStepIndex === step;

  it("runs as written: the header rule once setCanaryScale's pod is up, before the step completes; then 20 %, back to stable on abort", async () => {
    await scene.createNamespace(ns);
    await scene.kubectl('apply', '-n', ns, '-f', file('route.yaml'), '-f', file('services.yaml'));
    // What a sync does with Argo's Rollout: the same spec, applied as Rollgate's own kind. Its first step
    // has setHeaderRoute beside setCanaryScale, as written.
    const text = readFileSync(file('rollout.yaml'), 'utf8');
    expect(text).toContain('            replicas: 1\n          setHeaderRoute:\n');
    const rollout = text
      .replace('apiVersion: argoproj.io/v1alpha1', 'apiVersion: rollgate.dev/v1alpha1')
      .replace('metadata:\n', `metadata:\n  namespace: ${ns}\n`);
    await scene.apply('apisix-example-rollout.yaml', rollout);
    await scene.waitFor('the example healthy', ns, key.name, (s) => s.phase === 'Healthy');
    const routeWeights = weightsIn(ns, names);
    expect(await routeWeights.read()).toEqual([100, 0]);

    const routes = await recordChanges(scene, `/apis/apisix.apache.org/v2/namespaces/${ns}/apisixroutes`);
    const pods = await recordChanges(scene, `/api/v1/namespaces/${ns}/pods`);
    const statuses = await recordChanges(scene, `/apis/rollgate.dev/v1alpha1/namespaces/${ns}/rollouts`);
    await scene.kubectl(
      'patch',
      'rollouts.rollgate.dev',
      key.name,
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"argoproj/rollouts-demo:yellow"}]',
    );
    const paused = await scene.waitFor('the pause after the first step', ns, key.name, pausedAtStep(1));
    routes.stop();
    pods.stop();
    statuses.stop();
    const header = (await rules(ns, names.route)).find((r) => r.name === 'set-header');
    expect(header).toMatchObject({
      priority: 1,
      match: {
        paths: ['/*'],
        hosts: ['rollouts-demo.apisix.local'],
        exprs: [{ subject: { scope: 'Header', name: 'trace' }, op: 'Equal', value: 'debug' }],
      },
      backends: [{ serviceName: names.canary, servicePort: 80, weight: 100 }],
    });
    // setCanaryScale's one pod is up, and no weight has moved.
    const canary = (await scene.replicaSets(ns)).find((rs) => rs.hash === paused.currentPodHash);
    expect(canary?.replicas).toBe(1);
    expect(await routeWeights.read()).toEqual([100, 0]);
    // In the order the API server wrote them: the canary pod Ready, then the header rule, then the status
    // past the step (the step completes once both its route and its scale are there).
    const ready = pods.seen.find(({ object }) => {
      const pod = object as {
        metadata: { labels?: Record<string, string> };
        status?: { conditions?: Array<{ type: string; status: string }> };
      };
      return (
        pod.metadata.labels?.['rollouts-pod-template-hash'] === paused.currentPodHash &&
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
      );
    });
    const ruled = routes.seen.find(({ object }) =>
      (object as { spec: { http: HttpRule[] } }).spec.http.some((r) => r.name === 'set-header'),
    );
    // The new revision's status past step 0 (before it, the Healthy status said 10 of the old one).
    const pastStep = statuses.seen.find(({ object }) => {
      const status = (object as { status?: { currentPodHash?: string; currentStepIndex?: number } }).status;
      return status?.currentPodHash === paused.currentPodHash && (status?.currentStepIndex ?? 0) >= 1;
    });
    expect(ready).toBeDefined();
    expect(ruled).toBeDefined();
    expect(pastStep).toBeDefined();
    expect(ready!.resourceVersion).toBeLessThan(ruled!.resourceVersion);
    expect(ruled!.resourceVersion).toBeLessThan(pastStep!.resourceVersion);
    const completed = (await scene.clients.core.listNamespacedEvent({ namespace: ns })).items
      .filter((e) => e.reason === 'RolloutStepCompleted')
      .map((e) => e.message);
    expect(completed).toContain(
      'Step 1/10 completed: setCanaryScale {"replicas":1} + setHeaderRoute set-header',
    );

    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 20', ns, key.name, pausedAtStep(3));
    expect(await routeWeights.read()).toEqual([80, 20]);

    await abortRollout(scene.clients, key);
    await scene.waitFor('the abort carried out', ns, key.name, (s) => s.phase === 'Degraded');
    await expect.poll(() => routeWeights.read(), { timeout: 10_000 }).toEqual([100, 0]);
    await expect
      .poll(async () => (await rules(ns, names.route)).map((r) => r.name), { timeout: 10_000 })
      .toEqual([names.rule]);
  }, 90_000);
});
