// End to end, Traefik: a whole Rollgate walks a weighted TraefikService 20 → 50 → 100, back to stable on abort,
// puts a hand edit back at the next resync, and holds a rollout whose TraefikService is missing.
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

const NS = 'edge';
/** Short, so the drift test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;

// As Argo's docs have users write it: no weights (Argo CD stays in sync); a third service is someone else's.
const traefikServiceYaml = (namespace: string) => `apiVersion: traefik.io/v1alpha1
kind: TraefikService
metadata:
  name: web-wrr
  namespace: ${namespace}
spec:
  weighted:
    services:
      - name: web-stable
        port: 80
      - name: web-canary
        port: 80
      - name: docs
        port: 8080
        weight: 1
`;

const ROUTING = `traefik:
  weightedTraefikServiceName: web-wrr
`;

interface WeightedEntry {
  name: string;
  port?: number;
  weight?: number;
}

let scene: TrafficScene;

async function entries(namespace = NS): Promise<WeightedEntry[]> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'traefik.io',
    version: 'v1alpha1',
    namespace,
    plural: 'traefikservices',
    name: 'web-wrr',
  });
  return toPlainObject<{ spec: { weighted: { services: WeightedEntry[] } } }>(found).spec.weighted.services;
}

const weightOf = (list: WeightedEntry[], name: string) => list.find((e) => e.name === name)?.weight;

/** [stable, canary] weights, as read back from the TraefikService. */
const weightsIn = (namespace: string): RouteReadBack<[number | undefined, number | undefined]> => ({
  async read() {
    const list = await entries(namespace);
    return [weightOf(list, 'web-stable'), weightOf(list, 'web-canary')];
  },
  at: (canary) => [100 - canary, canary],
});
const weights = weightsIn(NS);

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['traefik.io_traefikservices.yaml'], {
    workers: { resyncMs: RESYNC_MS },
  });
  await deployRoutedRollout(scene, {
    namespace: NS,
    trafficRouting: ROUTING,
    objects: traefikServiceYaml(NS),
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('Traefik weighted TraefikService under a whole Rollgate', () => {
  it('weights the two services 100/0 at rest and walks them 20 → 50 → 100, then back to the new stable', async () => {
    expect(await weights.read()).toEqual([100, 0]);
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights);
    expect(done.trafficRouterError).toBeUndefined();
    const list = await entries();
    expect(list.map((e) => e.name)).toEqual(['web-stable', 'web-canary', 'docs']);
    expect(list[2]).toEqual({ name: 'docs', port: 8080, weight: 1 });
  }, 60_000);

  it('abort at 50 % sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/traefik.io/v1alpha1/namespaces/${NS}/traefikservices`,
      routedBack: (object) =>
        weightOf(
          (object as { spec: { weighted: { services: WeightedEntry[] } } }).spec.weighted.services,
          'web-canary',
        ) === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a hand edit of the weights is put back at the next resync, with an Event', async () => {
    const ns = 'edge-drift';
    const drift = weightsIn(ns);
    await deployRoutedRollout(scene, {
      namespace: ns,
      trafficRouting: ROUTING,
      objects: traefikServiceYaml(ns),
    });
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after setWeight 20', ns, 'web', pausedAt(1));
    expect(await drift.read()).toEqual([80, 20]);
    await scene.kubectl(
      'patch',
      'traefikservices.traefik.io',
      'web-wrr',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/weighted/services/0/weight","value":0},' +
        '{"op":"replace","path":"/spec/weighted/services/1/weight","value":100}]',
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
      .toEqual([
        `TraefikService ${ns}/web-wrr: weights edited outside Rollgate; set back to Rollgate's (canary 20)`,
      ]);
    expect((await scene.status(ns, 'web'))?.currentStepIndex).toBe(1);
  }, 60_000);

  it('a deleted TraefikService holds the canary with a message naming it; once back, it goes on', async () => {
    const ns = 'edge-broken';
    await deployRoutedRollout(scene, {
      namespace: ns,
      trafficRouting: ROUTING,
      objects: traefikServiceYaml(ns),
    });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () =>
        void (await scene.kubectl('delete', 'traefikservice.traefik.io', 'web-wrr', '-n', ns)),
      restore: () => scene.apply('broken-traefik.yaml', traefikServiceYaml(ns)),
      message: `TraefikService ${ns}/web-wrr: metadata.name: not found`,
    });
    expect(await weightsIn(ns).read()).toEqual([80, 20]);
  }, 60_000);
});
