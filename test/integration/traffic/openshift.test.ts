// End to end, OpenShift Routes (Argo's argoproj-labs/openshift plugin block): a whole Rollgate walks a Route's
// spec.to and canary alternate backend 20 → 50 → 100, back to stable on abort, puts a hand edit back at the
// next resync, holds a rollout whose Route is missing, and leaves the Route on stable when the Rollout is deleted.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import {
  abortRoutesBackFirst,
  deployRoutedRollout,
  heldWhileRouteMissing,
  pausedAt,
  setImage,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

const NS = 'openshift';
/** Short, so the drift test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;

// As users write a Route: to the stable Service, no alternate backend.
const routeYaml = (namespace: string) => `apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: web
  namespace: ${namespace}
spec:
  host: web.example.com
  port:
    targetPort: 80
  to:
    kind: Service
    name: web-stable
    weight: 100
`;

// As the plugin's README has users write it, its unused namespace included.
const routing = (namespace: string) => `plugins:
  argoproj-labs/openshift:
    routes:
      - web
    namespace: ${namespace}
`;

interface Backend {
  kind: string;
  name: string;
  weight?: number;
}
interface Route {
  metadata: { resourceVersion: string };
  spec: { host: string; port: unknown; to: Backend; alternateBackends?: Backend[] };
}

let scene: TrafficScene;

async function route(namespace = NS): Promise<Route> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'route.openshift.io',
    version: 'v1',
    namespace,
    plural: 'routes',
    name: 'web',
  });
  return toPlainObject<Route>(found);
}

/** [stable, canary] weights as the Route holds them: spec.to's, and the canary alternate backend's (none: 0). */
const weightsOf = (found: Route): [number | undefined, number] => [
  found.spec.to.name === 'web-stable' ? found.spec.to.weight : undefined,
  found.spec.alternateBackends?.find((b) => b.name === 'web-canary')?.weight ?? 0,
];

const weightsIn = (namespace: string): RouteReadBack<[number | undefined, number]> => ({
  read: async () => weightsOf(await route(namespace)),
  at: (canary) => [100 - canary, canary],
});
const weights = weightsIn(NS);

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['route.openshift.io_routes.yaml'], {
    workers: { resyncMs: RESYNC_MS },
  });
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: routing(NS), objects: routeYaml(NS) });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('OpenShift Route (the plugin block) under a whole Rollgate', () => {
  it('sends all to stable at rest and walks the canary backend 20 → 50 → 100, then removes it', async () => {
    expect(await weights.read()).toEqual([100, 0]);
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights, async (weight) => {
      expect((await route()).spec.alternateBackends).toEqual([
        { kind: 'Service', name: 'web-canary', weight },
      ]);
    });
    expect(done.trafficRouterError).toBeUndefined();
    const found = await route();
    expect(found.spec.alternateBackends).toBeUndefined();
    expect(found.spec.to).toEqual({ kind: 'Service', name: 'web-stable', weight: 100 });
    expect(found.spec.host).toBe('web.example.com');
  }, 60_000);

  it('abort at 50 % sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/route.openshift.io/v1/namespaces/${NS}/routes`,
      routedBack: (object) => weightsOf(object as unknown as Route)[1] === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a hand edit of the weights is put back at the next resync, with an Event', async () => {
    const ns = 'openshift-drift';
    const drift = weightsIn(ns);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: routing(ns), objects: routeYaml(ns) });
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after setWeight 20', ns, 'web', pausedAt(1));
    expect(await drift.read()).toEqual([80, 20]);
    await scene.kubectl(
      'patch',
      'routes.route.openshift.io',
      'web',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/to/weight","value":0},' +
        '{"op":"replace","path":"/spec/alternateBackends/0/weight","value":100}]',
    );
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
      .toEqual([`Route ${ns}/web: weights edited outside Rollgate; set back to Rollgate's (canary 20)`]);
    expect((await scene.status(ns, 'web'))?.currentStepIndex).toBe(1);
  }, 60_000);

  it('a deleted Route holds the canary with a message naming it; once back, it goes on', async () => {
    const ns = 'openshift-broken';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: routing(ns), objects: routeYaml(ns) });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () => void (await scene.kubectl('delete', 'route.route.openshift.io', 'web', '-n', ns)),
      restore: () => scene.apply('broken-openshift.yaml', routeYaml(ns)),
      message: `Route ${ns}/web: metadata.name: not found`,
    });
    expect(await weightsIn(ns).read()).toEqual([80, 20]);
  }, 60_000);

  it('deleting the Rollout leaves the Route in place, all on stable', async () => {
    const ns = 'openshift-deleted';
    const left = weightsIn(ns);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: routing(ns), objects: routeYaml(ns) });
    await walkToNewStable(scene, ns, 'web:2', left);
    await scene.kubectl('delete', 'rollouts.rollgate.dev', 'web', '-n', ns);
    // Its ReplicaSets go with it (owner references): by then Rollgate has seen the deletion.
    await expect.poll(async () => (await scene.replicaSets(ns)).length, { timeout: 15_000 }).toBe(0);
    const jobs = await scene.reconcileJobs();
    await expect.poll(() => scene.reconcileJobs(), { timeout: RESYNC_MS + 10_000 }).toBeGreaterThan(jobs);
    expect(await left.read()).toEqual(left.at(0));
  }, 60_000);
});
