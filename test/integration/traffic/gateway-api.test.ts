// End to end, Gateway API: a whole Rollgate walks an HTTPRoute's weights 20 → 50 → 100 and back to stable on abort.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { abortRollout, promoteRollout } from '../../../src/kube/rollout-commands.ts';
import { toPlainObject } from '../../../src/kube/client.ts';
import {
  recordChanges,
  routedRolloutYaml,
  servicesYaml,
  startTrafficScene,
  type LiveRolloutStatus,
  type TrafficScene,
} from './traffic-scene.ts';

const NS = 'shop';
const key = { namespace: NS, name: 'web' };

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

async function routeRules(): Promise<Rule[]> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    namespace: NS,
    plural: 'httproutes',
    name: 'web',
  });
  return toPlainObject<{ spec: { rules: Rule[] } }>(found).spec.rules;
}

/** [stable, canary] weights of the primary rule, as read back from the HTTPRoute. */
async function weights(): Promise<[number | undefined, number | undefined]> {
  const [primary] = await routeRules();
  const of = (name: string) => primary?.backendRefs?.find((ref) => ref.name === name)?.weight;
  return [of('web-stable'), of('web-canary')];
}

const pausedAt = (step: number) => (s: LiveRolloutStatus) =>
  s.phase === 'Paused' && s.currentStepIndex === step && s.currentPodHash !== s.stableRS;

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), ['gateway.networking.k8s.io_httproutes.yaml']);
  await scene.kubectl('create', 'namespace', NS);
  await scene.apply('services.yaml', servicesYaml(NS));
  await scene.apply('route.yaml', HTTP_ROUTE);
  await scene.apply(
    'rollout.yaml',
    routedRolloutYaml({ namespace: NS, image: 'web:1', trafficRouting: ROUTING }),
  );
  docsRule = (await routeRules())[1];
  await scene.waitFor('the first revision healthy', NS, 'web', (s) => s.phase === 'Healthy');
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('Gateway API (argoproj-labs/gatewayAPI block) under a whole Rollgate', () => {
  it('walks the HTTPRoute 20 → 50 → 100 at each pause, then back to the new stable; other rules untouched', async () => {
    expect(await weights()).toEqual([100, 0]);
    await scene.kubectl(
      'patch',
      'rollouts.rollgate.dev',
      'web',
      '-n',
      NS,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"web:2"}]',
    );
    await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    expect(await weights()).toEqual([80, 20]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 50', NS, 'web', pausedAt(3));
    expect(await weights()).toEqual([50, 50]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 100', NS, 'web', pausedAt(5));
    expect(await weights()).toEqual([0, 100]);
    await promoteRollout(scene.clients, key);
    const done = await scene.waitFor(
      'the new revision healthy',
      NS,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(weights, { timeout: 10_000 }).toEqual([100, 0]);
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
    await scene.kubectl(
      'patch',
      'rollouts.rollgate.dev',
      'web',
      '-n',
      NS,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"web:3"}]',
    );
    const paused = await scene.waitFor('the pause after setWeight 50', NS, 'web', (s) => {
      if (s.phase === 'Paused' && s.currentStepIndex === 1) void promoteRollout(scene.clients, key);
      return pausedAt(3)(s);
    });
    expect(await weights()).toEqual([50, 50]);
    const canaryHash = paused.currentPodHash!;
    const routes = await recordChanges(
      scene,
      `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`,
    );
    const sets = await recordChanges(scene, `/apis/apps/v1/namespaces/${NS}/replicasets`);
    await abortRollout(scene.clients, key);
    await scene.waitFor('the abort carried out', NS, 'web', (s) => s.phase === 'Degraded');
    await expect
      .poll(async () => (await scene.replicaSets(NS)).find((rs) => rs.hash === canaryHash)?.replicas, {
        timeout: 15_000,
      })
      .toBe(0);
    routes.stop();
    sets.stop();
    expect(await weights()).toEqual([100, 0]);
    const routedBack = routes.seen.find(({ object }) => {
      const rule = (object as { spec: { rules: Rule[] } }).spec.rules[0];
      return rule?.backendRefs?.find((ref) => ref.name === 'web-canary')?.weight === 0;
    });
    const scaledDown = sets.seen.find(({ object }) => {
      const rs = object as { metadata: { labels?: Record<string, string> }; spec: { replicas?: number } };
      return rs.metadata.labels?.['rollouts-pod-template-hash'] === canaryHash && (rs.spec.replicas ?? 0) < 2;
    });
    expect(routedBack).toBeDefined();
    expect(scaledDown).toBeDefined();
    expect(routedBack!.resourceVersion).toBeLessThan(scaledDown!.resourceVersion);
  }, 60_000);

  it('a deleted HTTPRoute holds the canary at 0 % with a message and an Event naming it; the route back, it goes on', async () => {
    const ns = 'shop-broken';
    const routeIn = HTTP_ROUTE.replace(`namespace: ${NS}`, `namespace: ${ns}`);
    await scene.kubectl('create', 'namespace', ns);
    await scene.apply('broken-services.yaml', servicesYaml(ns));
    await scene.apply('broken-route.yaml', routeIn);
    await scene.apply(
      'broken-rollout.yaml',
      routedRolloutYaml({ namespace: ns, image: 'web:1', trafficRouting: ROUTING }),
    );
    await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
    await scene.kubectl('delete', 'httproute', 'web', '-n', ns);
    await scene.kubectl(
      'patch',
      'rollouts.rollgate.dev',
      'web',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"web:2"}]',
    );
    const held = await scene.waitFor(
      'the router error recorded',
      ns,
      'web',
      (s) => s.trafficRouterError !== undefined,
    );
    expect(held.trafficRouterError?.message).toBe('HTTPRoute shop-broken/web: metadata.name: not found');
    expect(held.currentStepIndex ?? 0).toBe(0);
    expect(held.phase).not.toBe('Paused');
    const events = await scene.clients.core.listNamespacedEvent({ namespace: ns });
    expect(
      events.items.filter((e) => e.reason === 'TrafficRoutingError').map((e) => [e.type, e.message]),
    ).toEqual([['Warning', 'HTTPRoute shop-broken/web: metadata.name: not found']]);
    await scene.apply('broken-route.yaml', routeIn);
    const paused = await scene.waitFor(
      'the pause after setWeight 20 once the route is back',
      ns,
      'web',
      pausedAt(1),
    );
    expect(paused.trafficRouterError).toBeUndefined();
    const found = await scene.clients.custom.getNamespacedCustomObject({
      group: 'gateway.networking.k8s.io',
      version: 'v1',
      namespace: ns,
      plural: 'httproutes',
      name: 'web',
    });
    const [primary] = toPlainObject<{ spec: { rules: Rule[] } }>(found).spec.rules;
    expect(primary?.backendRefs?.map((ref) => [ref.name, ref.weight])).toEqual([
      ['web-stable', 80],
      ['web-canary', 20],
    ]);
  }, 60_000);
});
