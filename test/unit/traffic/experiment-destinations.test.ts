// The routers that carry an experiment step's weighted templates (Istio, SMI, ALB): each template's Service gets its
// weight beside canary and stable, the stable what is left; a template no longer asked for leaves the route.
import { describe, expect, it } from 'vitest';
import { readAlbConfig, type AlbConfig } from '../../../src/manifest/alb-traffic-routing.ts';
import {
  albIngressEdit,
  routesOfRollout,
  stableShare,
  trafficSplitEdit,
  virtualServiceEdit,
  type RouteObject,
  type RouteWeights,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const base = {
  canary: 10,
  total: 100,
  canaryService: 'web-canary',
  stableService: 'web-stable',
  stableHash: 'aaa111',
  canaryHash: 'bbb222',
};
const EXP = { serviceName: 'web-exp-ccc333', podTemplateHash: 'ccc333', weight: 20 };
const BASELINE = { serviceName: 'web-baseline-ddd444', podTemplateHash: 'ddd444', weight: 5 };
const withExperiments: RouteWeights = { ...base, additional: [EXP, BASELINE] };

describe('stableShare', () => {
  it('is what canary and the templates leave of the total, never below 0', () => {
    expect(stableShare(base)).toBe(90);
    expect(stableShare(withExperiments)).toBe(65);
    expect(stableShare({ ...base, canary: 90, additional: [EXP] })).toBe(0);
  });
});

describe('Istio VirtualService', () => {
  const edit = virtualServiceEdit(
    { name: 'web', routes: ['primary'], tlsRoutes: [], tcpRoutes: [] },
    'shop',
    undefined,
    [],
  );
  const vs = (route: unknown[]): RouteObject => ({
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { hosts: ['web'], http: [{ name: 'primary', route }] },
  });
  const routeOf = (out: unknown) =>
    (out as { spec: { http: Array<{ route: unknown[] }> } }).spec.http[0]!.route;
  const stable = { destination: { host: 'web-stable', port: { number: 80 } }, weight: 90 };
  const canary = { destination: { host: 'web-canary', port: { number: 80 } }, weight: 10 };

  it("adds each template's Service as a destination by host, sorted by name, after canary and stable", () => {
    expect(routeOf(edit.translate(vs([stable, canary]), withExperiments))).toEqual([
      { ...stable, weight: 65 },
      canary,
      { destination: { host: 'web-baseline-ddd444' }, weight: 5 },
      { destination: { host: 'web-exp-ccc333' }, weight: 20 },
    ]);
  });

  it("keeps a template's destination where it is (its port too), weighting it; idempotent", () => {
    const mine = {
      destination: { host: 'web-exp-ccc333.shop.svc.cluster.local', port: { number: 80 } },
      weight: 1,
    };
    const once = edit.translate(vs([stable, mine, canary]), { ...base, additional: [EXP] });
    expect(routeOf(once)).toEqual([{ ...stable, weight: 70 }, { ...mine, weight: 20 }, canary]);
    expect(edit.translate(once as RouteObject, { ...base, additional: [EXP] })).toEqual(once);
  });

  it('drops a template destination once the weights no longer name it (the experiment ended)', () => {
    const during = edit.translate(vs([stable, canary]), withExperiments) as RouteObject;
    expect(routeOf(edit.translate(during, base))).toEqual([stable, canary]);
  });
});

describe('SMI TrafficSplit', () => {
  const edit = trafficSplitEdit({}, 'shop', { name: 'web', uid: 'uid-web' });
  const backendsOf = (out: unknown) => (out as { spec: { backends: unknown[] } }).spec.backends;

  it("writes canary, each template's Service, then the stable with what is left (Argo's order)", () => {
    expect(backendsOf(edit.translate(undefined, withExperiments))).toEqual([
      { service: 'web-canary', weight: 10 },
      { service: 'web-exp-ccc333', weight: 20 },
      { service: 'web-baseline-ddd444', weight: 5 },
      { service: 'web-stable', weight: 65 },
    ]);
  });

  it('rewrites the backends whole: a template no longer weighted leaves the split', () => {
    const during = edit.translate(undefined, withExperiments) as RouteObject;
    const owned = {
      ...during,
      metadata: {
        ...(during['metadata'] as object),
        ownerReferences: [{ kind: 'Rollout', name: 'web', uid: 'uid-web', controller: true }],
      },
    };
    expect(backendsOf(edit.translate(owned, base))).toEqual([
      { service: 'web-canary', weight: 10 },
      { service: 'web-stable', weight: 90 },
    ]);
  });
});

describe('ALB Ingress', () => {
  const config = readAlbConfig({ ingress: 'web', servicePort: 80, rootService: 'web-root' }) as AlbConfig;
  const edit = albIngressEdit(config, 'web', 'shop', { name: 'web', managedRouteNames: [] });
  const KEY = 'alb.ingress.kubernetes.io/actions.web-root';
  const ingress: RouteObject = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'shop', annotations: { 'kubernetes.io/ingress.class': 'alb' } },
    spec: {
      rules: [
        {
          http: {
            paths: [
              { path: '/*', backend: { service: { name: 'web-root', port: { name: 'use-annotation' } } } },
            ],
          },
        },
      ],
    },
  };
  const groupsOf = (out: unknown) =>
    (
      JSON.parse(
        (out as { metadata: { annotations: Record<string, string> } }).metadata.annotations[KEY]!,
      ) as {
        ForwardConfig: { TargetGroups: Array<{ ServiceName: string; ServicePort: string; Weight: number }> };
      }
    ).ForwardConfig.TargetGroups.map((group) => [group.ServiceName, group.ServicePort, group.Weight]);

  it("adds a target group per template's Service on the servicePort, between canary and stable (Argo's order)", () => {
    expect(groupsOf(edit.translate(ingress, withExperiments))).toEqual([
      ['web-canary', '80', 10],
      ['web-exp-ccc333', '80', 20],
      ['web-baseline-ddd444', '80', 5],
      ['web-stable', '80', 65],
    ]);
    const after = edit.translate(edit.translate(ingress, withExperiments) as RouteObject, base);
    expect(groupsOf(after)).toEqual([
      ['web-canary', '80', 10],
      ['web-stable', '80', 90],
    ]);
  });
});

describe('routesOfRollout says whether the routers set carry experiment templates', () => {
  const routed = (trafficRouting: Record<string, unknown>) =>
    routesOfRollout(
      aRollout()
        .withCanary({ canaryService: 'web-canary', stableService: 'web-stable', trafficRouting })
        .build(),
    );
  it.each([
    [{ smi: {} }, true],
    [{ istio: { virtualService: { name: 'web' } } }, true],
    [{ alb: { ingress: 'web', servicePort: 80 } }, true],
    [{ nginx: { stableIngress: 'web' } }, false],
    [{ plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: 'web' } } }, false],
  ])('%j: %s', (trafficRouting, carries) => {
    expect(routed(trafficRouting)).toMatchObject({ experimentDestinations: carries });
  });
});
