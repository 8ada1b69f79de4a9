// End to end, Gateway API: a whole Rollgate walks an HTTPRoute's weights 20 → 50 → 100 and back to stable on abort.
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

const NS = 'shop';

// The route as its owner wrote it: the primary rule splits web-stable/web-canary; a second rule is someone else's.
const HTTP_ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: ${NS}
spec:
  parentRefs:
    - name: edge
  hostnames:
    - web.example
  rules:
    - matches:
        - path: {type: PathPrefix, value: /}
      backendRefs:
        - name: web-stable
          port: 80
          weight: 100
        - name: web-canary
          port: 80
          weight: 0
    - matches:
        - path: {type: PathPrefix, value: /docs}
      backendRefs:
        - name: docs
          port: 80
`;

const ROUTING = `plugins:
  argoproj-labs/gatewayAPI:
    httpRoute: web
`;

type Rule = { backendRefs?: Array<{ name: string; weight?: number }> };

let scene: TrafficScene;
/** The second rule as the API server stored it from the owner's apply (with its schema defaults). */
let docsRule: Rule | undefined;

async function routeRules(namespace = NS): Promise<Rule[]> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    namespace,
    plural: 'httproutes',
    name: 'web',
  });
  return toPlainObject<{ spec: { rules: Rule[] } }>(found).spec.rules;
}

const weightOf = (rule: Rule | undefined, name: string) =>
  rule?.backendRefs?.find((ref) => ref.name === name)?.weight;

/** [stable, canary] weights of the primary rule, as read back from the HTTPRoute. */
const weights: RouteReadBack<[number | undefined, number | undefined]> = {
  async read() {
    const [primary] = await routeRules();
    return [weightOf(primary, 'web-stable'), weightOf(primary, 'web-canary')];
  },
  at: (canary) => [100 - canary, canary],
};

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['gateway.networking.k8s.io_httproutes.yaml']);
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: HTTP_ROUTE });
  docsRule = (await routeRules())[1];
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('Gateway API (argoproj-labs/gatewayAPI block) under a whole Rollgate', () => {
  it('walks the HTTPRoute 20 → 50 → 100 at each pause, then back to the new stable; other rules untouched', async () => {
    expect(await weights.read()).toEqual([100, 0]);
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights);
    const rules = await routeRules();
    expect(rules).toHaveLength(2);
    expect(rules[1]).toEqual(docsRule);
    expect(rules[1]?.backendRefs?.map((ref) => ref.name)).toEqual(['docs']);
    expect(done.trafficRouterError).toBeUndefined();
    // Every write Rollgate sent to the route changed it (a write that changes nothing answers the same resourceVersion).
    const writes = scene.sandbox.audit
      .entries()
      .filter((entry) => entry.resource === 'httproutes' && entry.verb === 'PUT' && entry.code === 200);
    expect(writes.length).toBeGreaterThanOrEqual(4);
    expect(new Set(writes.map((entry) => entry.resourceVersion)).size).toBe(writes.length);
  }, 60_000);

  it('abort mid-way sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`,
      routedBack: (object) =>
        weightOf((object as { spec: { rules: Rule[] } }).spec.rules[0], 'web-canary') === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a deleted HTTPRoute holds the canary at 0 % with a message and an Event naming it; the route back, it goes on', async () => {
    const ns = 'shop-broken';
    const routeIn = HTTP_ROUTE.replace(`namespace: ${NS}`, `namespace: ${ns}`);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: routeIn });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () => void (await scene.kubectl('delete', 'httproute', 'web', '-n', ns)),
      restore: () => scene.apply('broken-route.yaml', routeIn),
      message: 'HTTPRoute shop-broken/web: metadata.name: not found',
    });
    const [primary] = await routeRules(ns);
    expect(primary?.backendRefs?.map((ref) => [ref.name, ref.weight])).toEqual([
      ['web-stable', 80],
      ['web-canary', 20],
    ]);
  }, 60_000);
});
