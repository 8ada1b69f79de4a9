// End to end, SMI: a whole Rollgate creates the rollout's TrafficSplit and walks it 20 → 50 → 100, back to stable on abort.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
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
const ROUTING = `smi:
  rootService: web
  trafficSplitName: web-split
`;

interface Split {
  apiVersion: string;
  metadata: { ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }> };
  spec: { service: string; backends: Array<{ service: string; weight: number }> };
}

let scene: TrafficScene;

async function split(): Promise<Split> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'split.smi-spec.io',
    version: 'v1alpha4',
    namespace: NS,
    plural: 'trafficsplits',
    name: 'web-split',
  });
  return toPlainObject<Split>(found);
}

const canaryWeight = (found: Split) => found.spec.backends.find((b) => b.service === 'web-canary')?.weight;

/** [stable, canary] backend weights, as read back from the TrafficSplit. */
const weights: RouteReadBack<[number | undefined, number | undefined]> = {
  async read() {
    const found = await split();
    return [found.spec.backends.find((b) => b.service === 'web-stable')?.weight, canaryWeight(found)];
  },
  at: (canary) => [100 - canary, canary],
};

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['split.smi-spec.io_trafficsplits.yaml']);
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('SMI TrafficSplit under a whole Rollgate', () => {
  it('creates the split owned by the rollout, in the version the cluster serves', async () => {
    const created = await split();
    expect(created.apiVersion).toBe('split.smi-spec.io/v1alpha4');
    expect(created.metadata.ownerReferences).toMatchObject([
      { kind: 'Rollout', name: 'web', controller: true },
    ]);
    expect(created.spec.service).toBe('web');
    expect(await weights.read()).toEqual([100, 0]);
  });

  it('walks the split 20 → 50 → 100 at each pause, then back to the new stable', async () => {
    await walkToNewStable(scene, NS, 'web:2', weights);
  }, 60_000);

  it('abort at 20 % sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 1,
      routes: weights,
      routesPath: `/apis/split.smi-spec.io/v1alpha4/namespaces/${NS}/trafficsplits`,
      routedBack: (object) => canaryWeight(object as unknown as Split) === 0,
      scaledDownBelow: 1,
    });
  }, 60_000);
});
