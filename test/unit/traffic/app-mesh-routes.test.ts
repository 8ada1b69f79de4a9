// The App Mesh translators: VirtualNodes pinned to the revisions' hashes, the VirtualService's VirtualRouter weighted per step.
import { describe, expect, it } from 'vitest';
import {
  NO_CANARY_HASH,
  RouteTranslationError,
  appMeshEdits,
  routesOfRollout,
  type RolloutRoutes,
  type RouteEdit,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number, canaryHash: string | undefined = 'new456', total = 100) => ({
  ...services,
  canary,
  total,
  stableHash: 'old123',
  canaryHash,
});
const config = {
  virtualService: 'web',
  routes: [],
  canaryVirtualNode: 'web-canary',
  stableVirtualNode: 'web-stable',
};
const [stableNode, canaryNode, router] = appMeshEdits(config, 'mesh') as [RouteEdit, RouteEdit, RouteEdit];

const virtualNode = (name: string): RouteObject => ({
  apiVersion: 'appmesh.k8s.aws/v1beta2',
  kind: 'VirtualNode',
  metadata: { name, namespace: 'mesh', resourceVersion: '3' },
  spec: {
    podSelector: { matchLabels: { app: 'web', 'rollouts-pod-template-hash': 'tbd' } },
    listeners: [{ portMapping: { port: 8080, protocol: 'http' } }],
  },
});

const virtualService = (ref: Record<string, unknown> = { name: 'web-router' }): RouteObject => ({
  metadata: { name: 'web', namespace: 'mesh' },
  spec: { provider: { virtualRouter: { virtualRouterRef: ref } } },
});

/** A VirtualService provided by a VirtualNode directly: nothing to split. */
const nodeProvidedService: RouteObject = {
  metadata: { name: 'web', namespace: 'mesh' },
  spec: { provider: { virtualNode: { virtualNodeRef: { name: 'x' } } } },
};

/** As Argo's example: a primary HTTP route over both nodes; a second route to another node is left alone. */
function virtualRouter(): RouteObject {
  return {
    metadata: { name: 'web-router', namespace: 'mesh', resourceVersion: '9' },
    spec: {
      listeners: [{ portMapping: { port: 80, protocol: 'http' } }],
      routes: [
        {
          name: 'primary',
          httpRoute: {
            match: { prefix: '/' },
            action: {
              weightedTargets: [
                { virtualNodeRef: { name: 'web-canary' }, weight: 0 },
                { virtualNodeRef: { name: 'web-stable' }, weight: 100 },
              ],
            },
          },
        },
        {
          name: 'legacy',
          tcpRoute: { action: { weightedTargets: [{ virtualNodeRef: { name: 'legacy' }, weight: 1 }] } },
        },
      ],
    },
  };
}

const resolved = (service: RouteObject | undefined = virtualService()) =>
  router.resolve!(service) as RouteEdit;
const targetsOf = (object: unknown, index = 0) =>
  (object as { spec: { routes: Array<Record<string, { action: { weightedTargets: unknown[] } }>> } }).spec
    .routes[index]!['httpRoute']!.action.weightedTargets;
const labelsOf = (object: unknown) =>
  (object as { spec: { podSelector: { matchLabels: Record<string, string> } } }).spec.podSelector.matchLabels;

describe('appMeshEdits: the VirtualNodes', () => {
  it('pins the stable node to the stable hash and the canary node to the canary hash, keeping the rest', () => {
    const stable = stableNode.translate(virtualNode('web-stable'), weights(20)) as RouteObject;
    const canary = canaryNode.translate(virtualNode('web-canary'), weights(20)) as RouteObject;
    expect(labelsOf(stable)).toEqual({ app: 'web', 'rollouts-pod-template-hash': 'old123' });
    expect(labelsOf(canary)).toEqual({ app: 'web', 'rollouts-pod-template-hash': 'new456' });
    expect((stable['spec'] as { listeners: unknown }).listeners).toEqual([
      { portMapping: { port: 8080, protocol: 'http' } },
    ]);
    expect(stable['metadata']).toEqual(virtualNode('web-stable')['metadata']);
    expect(stableNode.readWeights!(stable, services)).toEqual([]);
  });

  it.each([
    ['no canary', undefined],
    ['the canary is the stable revision', 'old123'],
  ])('with %s the canary node selects no pod (two nodes may not share a podSelector)', (_what, hash) => {
    const canary = canaryNode.translate(virtualNode('web-canary'), {
      ...weights(0),
      canaryHash: hash,
    }) as RouteObject;
    expect(labelsOf(canary)['rollouts-pod-template-hash']).toBe(NO_CANARY_HASH);
  });

  it('a node without a podSelector gets one; a missing node is an error naming it', () => {
    const bare = { metadata: { name: 'web-stable' }, spec: {} };
    expect(labelsOf(stableNode.translate(bare, weights(0)))).toEqual({
      'rollouts-pod-template-hash': 'old123',
    });
    expect((stableNode.translate(undefined, weights(0)) as Error).message).toBe(
      'VirtualNode mesh/web-stable: metadata.name: not found',
    );
  });
});

describe('appMeshEdits: the VirtualRouter', () => {
  it('is named by the VirtualService it reads first (namespace defaulting to the VirtualService one)', () => {
    expect(router.derivedFrom).toMatchObject({ name: 'web', resource: { kind: 'VirtualService' } });
    expect(resolved()).toMatchObject({
      namespace: 'mesh',
      name: 'web-router',
      resource: { kind: 'VirtualRouter' },
    });
    expect(resolved(virtualService({ name: 'r', namespace: 'edge' }))).toMatchObject({
      namespace: 'edge',
      name: 'r',
    });
  });

  it.each([
    [undefined, 'VirtualService mesh/web: metadata.name: not found'],
    [
      nodeProvidedService,
      'VirtualService mesh/web: spec.provider.virtualRouter.virtualRouterRef: missing: the VirtualService must be provided by a VirtualRouter (a virtualNode provider cannot split)',
    ],
  ])('a VirtualService that names no router is an error naming it', (service, message) => {
    const out = router.resolve!(service);
    expect(out).toBeInstanceOf(RouteTranslationError);
    expect((out as Error).message).toBe(message);
  });

  it.each([
    [0, 100],
    [20, 80],
    [50, 50],
    [100, 0],
  ])('at setWeight %i writes canary %i / stable the rest to the targets, nothing else', (canary, stable) => {
    const live = virtualRouter();
    const out = resolved().translate(live, weights(canary)) as RouteObject;
    expect(targetsOf(out)).toEqual([
      { virtualNodeRef: { name: 'web-canary' }, weight: canary },
      { virtualNodeRef: { name: 'web-stable' }, weight: stable },
    ]);
    const spec = out['spec'] as { routes: unknown[]; listeners: unknown };
    expect(spec.routes[1]).toEqual((virtualRouter()['spec'] as { routes: unknown[] }).routes[1]);
    expect(spec.listeners).toEqual([{ portMapping: { port: 80, protocol: 'http' } }]);
    expect(out['metadata']).toEqual(live['metadata']);
    expect(resolved().readWeights!(out, services)).toEqual([{ route: 'route primary', canary, stable }]);
  });

  it('writes maxTrafficWeight − W to stable and is idempotent', () => {
    const once = resolved().translate(virtualRouter(), weights(3, 'new456', 10)) as RouteObject;
    expect(targetsOf(once)).toMatchObject([{ weight: 3 }, { weight: 7 }]);
    expect(resolved().translate(once, weights(3, 'new456', 10))).toEqual(once);
  });

  it('a target in another namespace is not one of the rollout nodes', () => {
    const live = virtualRouter();
    const targets = targetsOf(live) as Array<{ virtualNodeRef: Record<string, string> }>;
    targets[0]!.virtualNodeRef['namespace'] = 'elsewhere';
    expect((resolved().translate(live, weights(20)) as Error).message).toBe(
      'VirtualRouter mesh/web-router: spec.routes[0].httpRoute.action.weightedTargets: route "primary" has no target for the canary VirtualNode "web-canary"',
    );
  });

  it('with routes listed, weights only those and refuses a name it lacks', () => {
    const listed = appMeshEdits({ ...config, routes: ['primary'] }, 'mesh')[2]!.resolve!(
      virtualService(),
    ) as RouteEdit;
    expect(listed.readWeights!(virtualRouter(), services)).toEqual([
      { route: 'route primary', canary: 0, stable: 100 },
    ]);
    const missing = appMeshEdits({ ...config, routes: ['nope'] }, 'mesh')[2]!.resolve!(
      virtualService(),
    ) as RouteEdit;
    expect((missing.translate(virtualRouter(), weights(20)) as Error).message).toBe(
      'VirtualRouter mesh/web-router: spec.routes[].name: no route is named "nope"',
    );
  });

  it.each([
    [undefined, 'VirtualRouter mesh/web-router: metadata.name: not found'],
    [
      { metadata: { name: 'web-router' }, spec: {} },
      'VirtualRouter mesh/web-router: spec.routes: missing or not a list',
    ],
    [
      {
        metadata: { name: 'web-router' },
        spec: { routes: [{ name: 'x', httpRoute: { action: { weightedTargets: [] } } }] },
      },
      'VirtualRouter mesh/web-router: spec.routes[].*.action.weightedTargets: no route targets the VirtualNodes "web-canary" and "web-stable"',
    ],
  ])('refuses a router it cannot weight, naming the field', (live, message) => {
    const out = resolved().translate(live as RouteObject | undefined, weights(20));
    expect(out).toBeInstanceOf(RouteTranslationError);
    expect((out as Error).message).toBe(message);
  });
});

describe('routesOfRollout with trafficRouting.appMesh', () => {
  it('edits the two VirtualNodes, then the router, as Argo orders them', () => {
    const rollout = aRollout()
      .withCanary({
        canaryService: 'web-canary',
        stableService: 'web-stable',
        trafficRouting: {
          appMesh: {
            virtualService: { name: 'web' },
            virtualNodeGroup: {
              canaryVirtualNodeRef: { name: 'vn-c' },
              stableVirtualNodeRef: { name: 'vn-s' },
            },
          },
        },
      })
      .build();
    const routes = routesOfRollout(rollout) as RolloutRoutes;
    expect(routes.providers).toEqual(['appMesh']);
    expect(routes.edits.map((edit) => [edit.resource.kind, edit.name])).toEqual([
      ['VirtualNode', 'vn-s'],
      ['VirtualNode', 'vn-c'],
      ['VirtualRouter', 'web'],
    ]);
  });

  it('a block without its VirtualNodes is an error naming the field', () => {
    const rollout = aRollout()
      .withCanary({
        canaryService: 'c',
        stableService: 's',
        trafficRouting: { appMesh: { virtualService: { name: 'web' } } },
      })
      .build();
    expect((routesOfRollout(rollout) as Error).message).toBe(
      'Rollout default/web: spec.strategy.canary.trafficRouting.appMesh.virtualNodeGroup: required: the canary and stable VirtualNodes',
    );
  });
});
