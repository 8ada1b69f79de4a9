// End to end, Ambassador/Emissary: a whole Rollgate creates the canary Mapping at 20 %, walks it to 50 and 100,
// and removes it once the weight is back at 0 (promotion or abort); the listed Mapping is never written.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import {
  abortRoutesBackFirst,
  deployRoutedRollout,
  heldWhileRouteMissing,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

const NS = 'emissary';
/** Short: the canary Mapping goes at the pass after the one that set it to 0 (a resync at rest). */
const RESYNC_MS = 1_500;

// As in Argo's example: a port on the service, no weight.
const mappingYaml = (namespace: string) => `apiVersion: getambassador.io/v2
kind: Mapping
metadata:
  name: web
  namespace: ${namespace}
spec:
  prefix: /web
  rewrite: /web
  service: web-stable:80
`;

const ROUTING = `ambassador:
  mappings: [web]
`;

interface Mapping {
  metadata: { resourceVersion: string; ownerReferences?: Array<{ kind: string; name: string }> };
  spec: { prefix?: string; service: string; weight?: number };
}

let scene: TrafficScene;

async function mapping(name: string, namespace = NS): Promise<Mapping | undefined> {
  try {
    const found = await scene.clients.custom.getNamespacedCustomObject({
      group: 'getambassador.io',
      version: 'v2',
      namespace,
      plural: 'mappings',
      name,
    });
    return toPlainObject<Mapping>(found);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** The canary Mapping's weight as read back (0 when there is none). */
const weights: RouteReadBack<number> = {
  read: async () => (await mapping('web-canary'))?.spec.weight ?? 0,
  at: (canary) => canary,
};

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['getambassador.io_mappings.yaml'], {
    workers: { resyncMs: RESYNC_MS },
  });
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: mappingYaml(NS) });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('Ambassador canary Mappings under a whole Rollgate', () => {
  it('has no canary Mapping at rest; creates it at 20 %, walks it to 100, removes it once promoted', async () => {
    expect(await mapping('web-canary')).toBeUndefined();
    const listed = await mapping('web');
    await walkToNewStable(scene, NS, 'web:2', weights, async (weight) => {
      const canary = await mapping('web-canary');
      expect(canary?.spec).toEqual({ prefix: '/web', rewrite: '/web', service: 'web-canary:80', weight });
      expect(canary?.metadata.ownerReferences).toMatchObject([{ kind: 'Rollout', name: 'web' }]);
    });
    await expect.poll(() => mapping('web-canary'), { timeout: RESYNC_MS + 10_000 }).toBeUndefined();
    expect((await mapping('web'))?.metadata.resourceVersion).toBe(listed?.metadata.resourceVersion);
    // The removal is Rollgate's own cleanup, not a correction of someone's edit.
    const events = await scene.clients.core.listNamespacedEvent({ namespace: NS });
    expect(events.items.filter((e) => e.reason === 'TrafficDriftCorrected')).toEqual([]);
  }, 60_000);

  it('abort at 50 % sets the canary Mapping to 0 before the canary scales down, then removes it', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/getambassador.io/v2/namespaces/${NS}/mappings`,
      routedBack: (object) => {
        const found = object as unknown as Mapping & { metadata: { name: string } };
        return found.metadata.name === 'web-canary' && (found.spec.weight ?? 0) === 0;
      },
      scaledDownBelow: 2,
    });
    await expect.poll(() => mapping('web-canary'), { timeout: RESYNC_MS + 10_000 }).toBeUndefined();
  }, 60_000);

  it('a missing listed Mapping holds the canary at 0 % with a message naming it; once back, it goes on', async () => {
    const ns = 'emissary-broken';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: mappingYaml(ns) });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () => void (await scene.kubectl('delete', 'mappings.getambassador.io', 'web', '-n', ns)),
      restore: () => scene.apply('broken-mapping.yaml', mappingYaml(ns)),
      message: `Mapping ${ns}/web: metadata.name: not found (a mapping of Rollout ${ns}/web)`,
      whileHeld: async () => expect(await mapping('web-canary', ns)).toBeUndefined(),
    });
    expect((await mapping('web-canary', ns))?.spec.weight).toBe(20);
  }, 60_000);
});
