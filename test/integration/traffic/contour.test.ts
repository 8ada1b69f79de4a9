// End to end, Contour (Argo's argoproj-labs/contour plugin block): a whole Rollgate walks an HTTPProxy's route
// 20 → 50 → 100, back to stable on abort, puts a hand edit back at the next resync, holds a rollout whose
// HTTPProxy is missing, leaves the HTTPProxy on stable when the Rollout is deleted, and adds a header route at
// its step that goes when the rollout aborts.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import { abortRollout } from '../../../src/views/rollout-commands.ts';
import {
  abortRoutesBackFirst,
  deployRoutedRollout,
  heldWhileRouteMissing,
  pausedAt,
  routedRolloutYaml,
  servicesYaml,
  setImage,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

const NS = 'contour';
/** Short, so the drift test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;

// As the plugin needs it written: the weights of a route's services add up to 100; a second route is someone else's.
const httpProxyYaml = (namespace: string) => `apiVersion: projectcontour.io/v1
kind: HTTPProxy
metadata:
  name: web
  namespace: ${namespace}
spec:
  virtualhost:
    fqdn: web.example.com
  routes:
    - conditions:
        - prefix: /
      services:
        - name: web-stable
          port: 80
          weight: 100
        - name: web-canary
          port: 80
          weight: 0
    - conditions:
        - prefix: /docs
      services:
        - name: docs
          port: 8080
`;

// As the plugin's README has users write it.
const ROUTING = `plugins:
  argoproj-labs/contour:
    httpProxies:
      - web
`;

interface ProxyService {
  name: string;
  port: number;
  weight?: number;
}
interface HttpProxy {
  metadata: { resourceVersion: string; annotations?: Record<string, string> };
  spec: { routes: Array<{ conditions: unknown[]; services: ProxyService[] }> };
}

let scene: TrafficScene;

async function httpProxy(namespace = NS): Promise<HttpProxy> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'projectcontour.io',
    version: 'v1',
    namespace,
    plural: 'httpproxies',
    name: 'web',
  });
  return toPlainObject<HttpProxy>(found);
}

const weightOf = (proxy: HttpProxy, name: string) =>
  proxy.spec.routes[0]?.services.find((s) => s.name === name)?.weight;

/** [stable, canary] weights of the split route, as read back from the HTTPProxy. */
const weightsIn = (namespace: string): RouteReadBack<[number | undefined, number | undefined]> => ({
  async read() {
    const proxy = await httpProxy(namespace);
    return [weightOf(proxy, 'web-stable'), weightOf(proxy, 'web-canary')];
  },
  at: (canary) => [100 - canary, canary],
});
const weights = weightsIn(NS);

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['projectcontour.io_httpproxies.yaml'], {
    workers: { resyncMs: RESYNC_MS },
  });
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: httpProxyYaml(NS) });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('Contour HTTPProxy (the plugin block) under a whole Rollgate', () => {
  it('weights the route 100/0 at rest and walks it 20 → 50 → 100, then back to the new stable', async () => {
    expect(await weights.read()).toEqual([100, 0]);
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights);
    expect(done.trafficRouterError).toBeUndefined();
    const proxy = await httpProxy();
    expect(proxy.spec.routes[1]).toEqual({
      conditions: [{ prefix: '/docs' }],
      services: [{ name: 'docs', port: 8080 }],
    });
  }, 60_000);

  it('abort at 50 % sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/projectcontour.io/v1/namespaces/${NS}/httpproxies`,
      routedBack: (object) => weightOf(object as unknown as HttpProxy, 'web-canary') === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a hand edit of the weights is put back at the next resync, with an Event', async () => {
    const ns = 'contour-drift';
    const drift = weightsIn(ns);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: httpProxyYaml(ns) });
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after setWeight 20', ns, 'web', pausedAt(1));
    expect(await drift.read()).toEqual([80, 20]);
    await scene.kubectl(
      'patch',
      'httpproxies.projectcontour.io',
      'web',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/routes/0/services/0/weight","value":0},' +
        '{"op":"replace","path":"/spec/routes/0/services/1/weight","value":100}]',
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
      .toEqual([`HTTPProxy ${ns}/web: weights edited outside Rollgate; set back to Rollgate's (canary 20)`]);
    expect((await scene.status(ns, 'web'))?.currentStepIndex).toBe(1);
  }, 60_000);

  it('a deleted HTTPProxy holds the canary with a message naming it; once back, it goes on', async () => {
    const ns = 'contour-broken';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: httpProxyYaml(ns) });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () =>
        void (await scene.kubectl('delete', 'httpproxy.projectcontour.io', 'web', '-n', ns)),
      restore: () => scene.apply('broken-contour.yaml', httpProxyYaml(ns)),
      message: `HTTPProxy ${ns}/web: metadata.name: not found`,
    });
    expect(await weightsIn(ns).read()).toEqual([80, 20]);
  }, 60_000);

  it('deleting the Rollout leaves the HTTPProxy in place, all on stable', async () => {
    const ns = 'contour-deleted';
    const left = weightsIn(ns);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: httpProxyYaml(ns) });
    await walkToNewStable(scene, ns, 'web:2', left);
    await scene.kubectl('delete', 'rollouts.rollgate.dev', 'web', '-n', ns);
    // Its ReplicaSets go with it (owner references): by then Rollgate has seen the deletion.
    await expect.poll(async () => (await scene.replicaSets(ns)).length, { timeout: 15_000 }).toBe(0);
    const jobs = await scene.reconcileJobs();
    await expect.poll(() => scene.reconcileJobs(), { timeout: RESYNC_MS + 10_000 }).toBeGreaterThan(jobs);
    expect(await left.read()).toEqual(left.at(0));
  }, 60_000);
});

describe.skipIf(crds.missing)('a Contour header route under a whole Rollgate', () => {
  const ns = 'contour-header';
  const header = [{ prefix: '/' }, { header: { name: 'x-canary', exact: 'yes' } }];

  beforeAll(async () => {
    await scene.createNamespace(ns);
    await scene.apply('contour-header-services.yaml', servicesYaml(ns));
    await scene.apply('contour-header-proxy.yaml', httpProxyYaml(ns));
    const rollout = routedRolloutYaml({ namespace: ns, image: 'web:1', trafficRouting: ROUTING })
      .replace(
        '      trafficRouting:\n',
        '      trafficRouting:\n        managedRoutes:\n          - name: canary-header\n',
      )
      .replace(
        '        - setWeight: 20\n',
        `        - setWeight: 20
        - setHeaderRoute:
            name: canary-header
            match:
              - headerName: x-canary
                headerValue: {exact: "yes"}
`,
      );
    await scene.apply('contour-header-rollout.yaml', rollout);
    await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
  }, 60_000);

  it('adds a route requiring the header, to the canary alone, beside the split; removes it on abort', async () => {
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after the header route', ns, 'web', pausedAt(2));
    const proxy = await httpProxy(ns);
    expect(proxy.metadata.annotations?.['rollgate.dev/header-routes']).toBeDefined();
    expect(proxy.spec.routes).toEqual([
      { conditions: header, services: [{ name: 'web-canary', port: 80 }] },
      {
        conditions: [{ prefix: '/' }],
        services: [
          { name: 'web-stable', port: 80, weight: 80 },
          { name: 'web-canary', port: 80, weight: 20 },
        ],
      },
      { conditions: [{ prefix: '/docs' }], services: [{ name: 'docs', port: 8080 }] },
    ]);
    await abortRollout(scene.clients, { namespace: ns, name: 'web' });
    await scene.waitFor('the abort carried out', ns, 'web', (s) => s.phase === 'Degraded');
    await expect
      .poll(async () => (await httpProxy(ns)).spec.routes.map((route) => route.conditions), {
        timeout: 10_000,
      })
      .toEqual([[{ prefix: '/' }], [{ prefix: '/docs' }]]);
    expect(await weightsIn(ns).read()).toEqual([100, 0]);
    expect((await httpProxy(ns)).metadata.annotations?.['rollgate.dev/header-routes']).toBeUndefined();
  }, 60_000);
});
