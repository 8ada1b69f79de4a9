// End to end, Istio with DestinationRule subsets and no canary/stable Services (F1's routing): weights walk 20 → 50 → 100,
// the subsets follow the pod hashes, and an abort sends 100 % to stable before the canary scales down.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { istioSubsetRoutesYaml } from '../../support/traffic-routes.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import {
  abortRoutesBackFirst,
  deployRoutedRollout,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

const NS = 'mesh';
const ROUTING = `istio:
  virtualService:
    name: web
  destinationRule:
    name: web
    canarySubsetName: canary
    stableSubsetName: stable
`;

interface Destination {
  destination: { subset?: string };
  weight?: number;
}
let scene: TrafficScene;

async function get(plural: string): Promise<Record<string, unknown>> {
  return toPlainObject<Record<string, unknown>>(
    await scene.clients.custom.getNamespacedCustomObject({
      group: 'networking.istio.io',
      version: 'v1',
      namespace: NS,
      plural,
      name: 'web',
    }),
  );
}

type Route = Destination[];
const routeOf = (virtualService: Record<string, unknown>): Route =>
  (virtualService['spec'] as { http: Array<{ route: Route }> }).http[0]!.route;
const subsetWeight = (route: Route, subset: string) =>
  route.find((d) => d.destination.subset === subset)?.weight;

/** [stable, canary] subset weights of the VirtualService's route. */
const weights: RouteReadBack<[number | undefined, number | undefined]> = {
  async read() {
    const route = routeOf(await get('virtualservices'));
    return [subsetWeight(route, 'stable'), subsetWeight(route, 'canary')];
  },
  at: (canary) => [100 - canary, canary],
};

/** The pod hash each subset selects: [stable, canary]. */
async function subsetHashes(): Promise<[string | undefined, string | undefined]> {
  const subsets = (
    (await get('destinationrules'))['spec'] as {
      subsets: Array<{ name: string; labels?: Record<string, string> }>;
    }
  ).subsets;
  const of = (name: string) => subsets.find((s) => s.name === name)?.labels?.['rollouts-pod-template-hash'];
  return [of('stable'), of('canary')];
}

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), [
    'networking.istio.io_virtualservices.yaml',
    'networking.istio.io_destinationrules.yaml',
  ]);
  await deployRoutedRollout(scene, {
    namespace: NS,
    trafficRouting: ROUTING,
    objects: istioSubsetRoutesYaml(NS),
    services: false,
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('Istio VirtualService + DestinationRule subsets under a whole Rollgate', () => {
  it('walks the subset weights 20 → 50 → 100 with the subsets pinned to the hashes, then back to the new stable', async () => {
    const first = await scene.status(NS, 'web');
    await expect.poll(subsetHashes).toEqual([first?.stableRS, undefined]);
    expect(await weights.read()).toEqual([100, 0]);
    const { at20, done } = await walkToNewStable(scene, NS, 'web:2', weights, async (weight, paused) => {
      if (weight === 20) expect(await subsetHashes()).toEqual([paused.stableRS, paused.currentPodHash]);
    });
    await expect.poll(subsetHashes).toEqual([done.stableRS, undefined]);
    expect(done.stableRS).toBe(at20.currentPodHash);
  }, 60_000);

  it('abort at 50 % sends 100 % to the stable subset before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/networking.istio.io/v1/namespaces/${NS}/virtualservices`,
      routedBack: (object) => subsetWeight(routeOf(object), 'canary') === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);
});
