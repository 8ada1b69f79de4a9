// The Contour translator: an HTTPProxy's split routes weighted per step, read back, put back after drift; its header routes.
import { describe, expect, it } from 'vitest';
import {
  CONTOUR_HEADER_ROUTES_ANNOTATION,
  RouteTranslationError,
  httpProxyEdit,
  routesOfRollout,
  type RolloutRoutes,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import type { HeaderRoute } from '../../../src/traffic/route-edit.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number, total = 100) => ({ ...services, canary, total, stableHash: 'abc123' });
const edit = httpProxyEdit('web', 'shop');

type Route = { conditions?: unknown[]; services: Array<Record<string, unknown>>; [key: string]: unknown };

/** The HTTPProxy as the plugin needs it written: a split route adding up to 100, and a route of someone else's. */
function httpProxy(split: Array<Record<string, unknown>> = []): RouteObject {
  return {
    apiVersion: 'projectcontour.io/v1',
    kind: 'HTTPProxy',
    metadata: { name: 'web', namespace: 'shop', resourceVersion: '7', labels: { team: 'web' } },
    spec: {
      virtualhost: { fqdn: 'web.example.com' },
      routes: [
        {
          conditions: [{ prefix: '/' }],
          timeoutPolicy: { response: '5s' },
          services: [
            { name: 'web-stable', port: 80, weight: 100 },
            { name: 'web-canary', port: 80, weight: 0 },
            ...split,
          ],
        },
        { conditions: [{ prefix: '/docs' }], services: [{ name: 'docs', port: 8080 }] },
      ],
    },
  };
}

const routesOf = (object: unknown) => (object as { spec: { routes: Route[] } }).spec.routes;
const weightsOf = (route: Route | undefined) => route?.services.map((s) => [s['name'], s['weight']]);

describe('httpProxyEdit', () => {
  it('edits the HTTPProxy named, in projectcontour.io/v1', () => {
    expect(edit).toMatchObject({ namespace: 'shop', name: 'web' });
    expect(edit.resource).toEqual({
      group: 'projectcontour.io',
      versions: ['v1'],
      plural: 'httpproxies',
      kind: 'HTTPProxy',
    });
  });

  it.each([
    [0, 100],
    [20, 80],
    [50, 50],
    [100, 0],
  ])(
    'at setWeight %i writes canary %i / stable the rest in the split route, nothing else',
    (canary, stable) => {
      const live = httpProxy();
      const out = edit.translate(live, weights(canary)) as RouteObject;
      expect(weightsOf(routesOf(out)[0])).toEqual([
        ['web-stable', stable],
        ['web-canary', canary],
      ]);
      expect(routesOf(out)[1]).toEqual(routesOf(live)[1]);
      expect(routesOf(out)[0]?.['timeoutPolicy']).toEqual({ response: '5s' });
      expect(out['metadata']).toEqual(live['metadata']);
    },
  );

  it('shares what other services leave, as the plugin does; mirrors are neither weighted nor counted', () => {
    const out = edit.translate(
      httpProxy([
        { name: 'legacy', port: 80, weight: 10 },
        { name: 'shadow', port: 80, mirror: true, weight: 30 },
      ]),
      weights(25),
    );
    // 90 left by "legacy": the canary ⌊90 × 25 / 100⌋ = 22, the stable 68.
    expect(weightsOf(routesOf(out)[0])).toEqual([
      ['web-stable', 68],
      ['web-canary', 22],
      ['legacy', 10],
      ['shadow', 30],
    ]);
  });

  it('scales to maxTrafficWeight', () => {
    expect(weightsOf(routesOf(edit.translate(httpProxy(), weights(200, 1000)))[0])).toEqual([
      ['web-stable', 800],
      ['web-canary', 200],
    ]);
  });

  it('writes nothing when the weights are already there (a rollout at rest)', () => {
    const once = edit.translate(httpProxy(), weights(40)) as RouteObject;
    expect(edit.translate(once, weights(40))).toEqual(once);
  });

  it('puts back weights edited by hand, and reads the drift first', () => {
    const written = edit.translate(httpProxy(), weights(20)) as RouteObject;
    const edited = structuredClone(written);
    routesOf(edited)[0]!.services[0]!['weight'] = 0;
    routesOf(edited)[0]!.services[1]!['weight'] = 100;
    expect(edit.readWeights?.(edited, services)).toEqual([{ route: 'route 0', canary: 100, stable: 0 }]);
    const back = edit.translate(edited, weights(20));
    expect(back).toEqual(written);
    expect(edit.readWeights?.(back as RouteObject, services)).toEqual([
      { route: 'route 0', canary: 20, stable: 80 },
    ]);
  });

  it('reads unset weights as Contour splits: an even share without any weight, 0 beside a set one', () => {
    const even = httpProxy();
    routesOf(even)[0]!.services = [
      { name: 'web-stable', port: 80 },
      { name: 'web-canary', port: 80 },
    ];
    expect(edit.readWeights?.(even, services)).toEqual([{ route: 'route 0', canary: 50, stable: 50 }]);
    const half = httpProxy();
    delete routesOf(half)[0]!.services[1]!['weight'];
    expect(edit.readWeights?.(half, services)).toEqual([{ route: 'route 0', canary: 0, stable: 100 }]);
  });

  it('names the missing object, a route without the stable or the canary, and an HTTPProxy without routes', () => {
    expect(edit.translate(undefined, weights(20))).toMatchObject({
      code: 'traffic.route_missing',
      message: 'HTTPProxy shop/web: metadata.name: not found',
    });
    const noStable = httpProxy();
    routesOf(noStable)[0]!.services.shift();
    expect(edit.translate(noStable, weights(20))).toMatchObject({
      code: 'traffic.backend_not_found',
      message:
        'HTTPProxy shop/web: spec.routes[0].services: no service names the stableService "web-stable" beside the canaryService "web-canary"',
    });
    expect(edit.translate(httpProxy(), { ...weights(20), canaryService: 'other' })).toMatchObject({
      code: 'traffic.backend_not_found',
      message: 'HTTPProxy shop/web: spec.routes[].services: no route sends to the canaryService "other"',
    });
    const includesOnly = { metadata: { name: 'web' }, spec: { includes: [{ name: 'child' }] } };
    for (const out of [
      edit.translate(includesOnly, weights(20)),
      edit.readWeights?.(includesOnly, services),
    ]) {
      expect(out).toBeInstanceOf(RouteTranslationError);
      expect(out).toMatchObject({ code: 'traffic.route_malformed', field: 'spec.routes' });
    }
    const crowded = httpProxy([{ name: 'legacy', port: 80, weight: 120 }]);
    expect(edit.translate(crowded, weights(20))).toMatchObject({
      code: 'traffic.route_malformed',
      message:
        "HTTPProxy shop/web: spec.routes[0].services: the other services' weights (120) exceed the 100 to share",
    });
  });
});

describe('header routes on an HTTPProxy', () => {
  const header: HeaderRoute = {
    name: 'beta',
    match: [
      { headerName: 'x-beta', headerValue: { exact: 'yes' } },
      { headerName: 'x-team', headerValue: { prefix: 'web.' } },
    ],
  };
  const set = (live: RouteObject, route: HeaderRoute) =>
    edit.setHeaderRoute!(live, route, services) as RouteObject;

  it('adds a copy of the split route requiring the headers, to the canary only, before it, and records it', () => {
    const live = edit.translate(httpProxy(), weights(20)) as RouteObject;
    const out = set(live, header);
    const routes = routesOf(out);
    expect(routes).toHaveLength(3);
    expect(routes[0]).toEqual({
      conditions: [
        { prefix: '/' },
        { header: { name: 'x-beta', exact: 'yes' } },
        { header: { name: 'x-team', regex: '^web\\..*' } },
      ],
      timeoutPolicy: { response: '5s' },
      services: [{ name: 'web-canary', port: 80 }],
    });
    expect(routes.slice(1)).toEqual(routesOf(live));
    const annotations = (out['metadata'] as { annotations: Record<string, string> }).annotations;
    expect(JSON.parse(annotations[CONTOUR_HEADER_ROUTES_ANNOTATION]!)).toEqual({
      beta: [
        { header: { name: 'x-beta', exact: 'yes' } },
        { header: { name: 'x-team', regex: '^web\\..*' } },
      ],
    });
  });

  it('leaves the header route out of the split and the read-back, with its keys in any order', () => {
    const withHeader = set(edit.translate(httpProxy(), weights(20)) as RouteObject, header);
    // The API server may hand the object back with its keys sorted.
    const reordered = JSON.parse(
      JSON.stringify(withHeader, (_k, v: unknown) =>
        v !== null && typeof v === 'object' && !Array.isArray(v)
          ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? 1 : -1)))
          : v,
      ),
    ) as RouteObject;
    const moved = edit.translate(reordered, weights(50)) as RouteObject;
    expect(weightsOf(routesOf(moved)[0])).toEqual([['web-canary', undefined]]);
    expect(weightsOf(routesOf(moved)[1])).toEqual([
      ['web-stable', 50],
      ['web-canary', 50],
    ]);
    expect(edit.readWeights?.(moved, services)).toEqual([{ route: 'route 1', canary: 50, stable: 50 }]);
  });

  it('replaces the route of the same name, and removes it and its record when the match is absent', () => {
    const first = set(edit.translate(httpProxy(), weights(20)) as RouteObject, header);
    const second = set(first, {
      name: 'beta',
      match: [{ headerName: 'x-beta', headerValue: { regex: 'y.*' } }],
    });
    expect(routesOf(second)).toHaveLength(3);
    expect(routesOf(second)[0]?.conditions).toEqual([
      { prefix: '/' },
      { header: { name: 'x-beta', regex: 'y.*' } },
    ]);
    const removed = set(second, { name: 'beta' });
    expect(removed).toEqual(edit.translate(httpProxy(), weights(20)));
  });

  it('refuses a header route on an HTTPProxy that does not send to the canary', () => {
    expect(edit.setHeaderRoute!(httpProxy(), header, { ...services, canaryService: 'other' })).toMatchObject({
      code: 'traffic.backend_not_found',
      message:
        'HTTPProxy shop/web: spec.routes[].services: no route sends to the canaryService "other" to add the header route "beta" to',
    });
    expect(edit.setHeaderRoute!(undefined, header, services)).toMatchObject({
      code: 'traffic.route_missing',
    });
  });
});

describe('the Contour plugin row of the provider table', () => {
  const routed = (contour: Record<string, unknown>) =>
    routesOfRollout(
      aRollout('web')
        .withCanary({ ...services, trafficRouting: { plugins: { 'argoproj-labs/contour': contour } } })
        .build(),
    );

  it('routes a rollout through each HTTPProxy listed, in the rollout namespace', () => {
    const routes = routed({ httpProxies: ['web', 'web-internal'] }) as RolloutRoutes;
    expect(routes).toMatchObject({ providers: ['plugins.argoproj-labs/contour'], total: 100, ...services });
    const namespace = routes.edits[0]?.namespace ?? '';
    expect(routes.edits.map((e) => `${e.resource.kind} ${e.namespace}/${e.name}`)).toEqual([
      `HTTPProxy ${namespace}/web`,
      `HTTPProxy ${namespace}/web-internal`,
    ]);
    expect(routed({ httpProxies: ['web'], namespace })).not.toBeInstanceOf(RouteTranslationError);
  });

  it('refuses a block listing no HTTPProxy, or a namespace that is not the rollout’s, naming the field', () => {
    expect(routed({})).toMatchObject({
      code: 'traffic.config_invalid',
      field: 'spec.strategy.canary.trafficRouting.plugins["argoproj-labs/contour"].httpProxies',
    });
    expect(routed({ httpProxies: ['web'], namespace: 'elsewhere' })).toMatchObject({
      code: 'traffic.config_invalid',
      field: 'spec.strategy.canary.trafficRouting.plugins["argoproj-labs/contour"].namespace',
    });
  });
});
