// The provider table: which routes a rollout's trafficRouting names, and why one cannot be followed.
import { describe, expect, it } from 'vitest';
import { RouteTranslationError, routesOfRollout, type RolloutRoutes } from '../../../src/traffic/index.ts';
import type { TrafficRouting } from '../../../src/manifest/rollout.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const routed = (trafficRouting: TrafficRouting, fields: Record<string, unknown> = services) =>
  routesOfRollout(
    aRollout('web')
      .withCanary({ ...fields, trafficRouting })
      .build(),
  );
const names = (routes: ReturnType<typeof routesOfRollout>) =>
  (routes as RolloutRoutes).edits.map((edit) => `${edit.resource.kind} ${edit.namespace}/${edit.name}`);

describe('routesOfRollout', () => {
  it('has nothing to route without trafficRouting, or with only managedRoutes', () => {
    expect(routesOfRollout(aRollout('web').withCanary(services).build())).toBeUndefined();
    expect(routed({ managedRoutes: [{ name: 'h' }] })).toBeUndefined();
  });

  it("reads Argo's gatewayAPI plugin block as written", () => {
    const routes = routed({
      plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: 'web', namespace: 'edge' } },
    });
    expect((routes as RolloutRoutes).providers).toEqual(['plugins.argoproj-labs/gatewayAPI']);
    expect(names(routes)).toEqual(['HTTPRoute edge/web']);
  });

  it('reads the native gatewayAPI block: httpRoutes[], grpcRoute, tcpRoute, in the rollout namespace', () => {
    const routes = routed({
      gatewayAPI: {
        httpRoutes: [{ name: 'a' }, { name: 'b', useHeaderRoutes: true }],
        grpcRoute: 'g',
        tcpRoute: 't',
      },
      maxTrafficWeight: 1000,
    });
    expect(names(routes)).toEqual([
      'GRPCRoute default/g',
      'TCPRoute default/t',
      'HTTPRoute default/a',
      'HTTPRoute default/b',
    ]);
    expect((routes as RolloutRoutes).total).toBe(1000);
  });

  it('names the TrafficSplit for smi', () => {
    expect(names(routed({ smi: {} }))).toEqual(['TrafficSplit default/web']);
    expect(names(routed({ smi: { trafficSplitName: 'split', rootService: 'web' } }))).toEqual([
      'TrafficSplit default/split',
    ]);
  });

  it('names a canary Ingress per stable Ingress for nginx', () => {
    expect(names(routed({ nginx: { stableIngress: 'edge' } }))).toEqual(['Ingress default/web-edge-canary']);
    expect(names(routed({ nginx: { stableIngresses: ['a', 'b'] } }))).toEqual([
      'Ingress default/web-a-canary',
      'Ingress default/web-b-canary',
    ]);
  });

  it('reads Istio: the DestinationRule first, then the VirtualServices (name.namespace shorthand); no services needed with subsets', () => {
    const istio = {
      virtualServices: [{ name: 'web' }, { name: 'web-internal.mesh' }],
      destinationRule: { name: 'web-dr', canarySubsetName: 'canary', stableSubsetName: 'stable' },
    };
    const routes = routed({ istio }, {});
    expect(names(routes)).toEqual([
      'DestinationRule default/web-dr',
      'VirtualService default/web',
      'VirtualService mesh/web-internal',
    ]);
    expect((routes as RolloutRoutes).canaryService).toBe('');
    expect(routed({ istio: { virtualService: { name: 'web' } } }, {})).toMatchObject({
      code: 'traffic.config_invalid',
      field: 'spec.strategy.canary.canaryService',
    });
  });

  it.each([
    {
      name: 'no route named',
      routing: { gatewayAPI: {} },
      fields: services,
      field: 'spec.strategy.canary.trafficRouting.gatewayAPI',
    },
    {
      name: 'a route without a name',
      routing: { plugins: { 'argoproj-labs/gatewayAPI': { httpRoutes: [{}] } } },
      fields: services,
      field: 'spec.strategy.canary.trafficRouting.plugins["argoproj-labs/gatewayAPI"].httpRoutes[0].name',
    },
    {
      name: 'an nginx block with both stableIngress and stableIngresses',
      routing: { nginx: { stableIngress: 'a', stableIngresses: ['b'] } },
      fields: services,
      field: 'spec.strategy.canary.trafficRouting.nginx.stableIngresses',
    },
    {
      name: 'an nginx block naming no Ingress',
      routing: { nginx: { annotationPrefix: 'x' } },
      fields: services,
      field: 'spec.strategy.canary.trafficRouting.nginx',
    },
    {
      name: 'nginx without a stableService',
      routing: { nginx: { stableIngress: 'a' } },
      fields: { canaryService: 'web-canary' },
      field: 'spec.strategy.canary.stableService',
    },
    {
      name: 'no canaryService',
      routing: { smi: {} },
      fields: { stableService: 'web-stable' },
      field: 'spec.strategy.canary.canaryService',
    },
    {
      name: 'canaryService = stableService',
      routing: { smi: {} },
      fields: { canaryService: 'web', stableService: 'web' },
      field: 'spec.strategy.canary.canaryService',
    },
  ])('refuses $name, naming the rollout and the field', ({ routing, fields, field }) => {
    const routes = routed(routing as TrafficRouting, fields);
    expect(routes).toBeInstanceOf(RouteTranslationError);
    expect(routes).toMatchObject({ code: 'traffic.config_invalid', object: 'Rollout default/web', field });
  });
});
