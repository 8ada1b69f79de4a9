// The APISIX translator: an ApisixRoute's weighted rules per step, read back, and header routes as rules of their own.
import { describe, expect, it } from 'vitest';
import {
  RouteTranslationError,
  apisixRouteEdit,
  routesOfRollout,
  type RolloutRoutes,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number, total = 100) => ({ ...services, canary, total, stableHash: 'abc123' });
const edit = apisixRouteEdit({ route: 'web-route', rules: ['web'] }, 'shop');

/** As Argo's example has users write it: no weights; a second rule is someone else's. */
function apisixRoute(): RouteObject {
  return {
    apiVersion: 'apisix.apache.org/v2',
    kind: 'ApisixRoute',
    metadata: { name: 'web-route', namespace: 'shop', resourceVersion: '7' },
    spec: {
      ingressClassName: 'apisix',
      http: [
        {
          name: 'web',
          priority: 2,
          match: { paths: ['/*'], hosts: ['shop.example'], methods: ['GET'] },
          plugins: [{ name: 'cors', enable: true }],
          backends: [
            { serviceName: 'web-stable', servicePort: 80 },
            { serviceName: 'web-canary', servicePort: 80 },
          ],
        },
        { name: 'docs', match: { paths: ['/docs'] }, backends: [{ serviceName: 'docs', servicePort: 80 }] },
      ],
    },
  };
}

type Rule = { name: string; priority?: number; match?: Record<string, unknown>; backends: unknown[] };
const rulesOf = (object: unknown) => (object as { spec: { http: Rule[] } }).spec.http;

describe('apisixRouteEdit', () => {
  it('edits the ApisixRoute named, in apisix.apache.org/v2', () => {
    expect(edit).toMatchObject({ namespace: 'shop', name: 'web-route' });
    expect(edit.resource).toMatchObject({
      group: 'apisix.apache.org',
      versions: ['v2'],
      plural: 'apisixroutes',
    });
  });

  it.each([
    [0, 100],
    [20, 80],
    [50, 50],
    [100, 0],
  ])('at setWeight %i writes canary %i / stable the rest in the named rule only', (canary, stable) => {
    const live = apisixRoute();
    const out = edit.translate(live, weights(canary)) as RouteObject;
    const [web, docs] = rulesOf(out);
    expect(web!.backends).toEqual([
      { serviceName: 'web-stable', servicePort: 80, weight: stable },
      { serviceName: 'web-canary', servicePort: 80, weight: canary },
    ]);
    expect({ ...web, backends: undefined }).toEqual({ ...rulesOf(live)[0], backends: undefined });
    expect(docs).toEqual(rulesOf(live)[1]);
    expect(out['metadata']).toEqual(live['metadata']);
    expect((out['spec'] as { ingressClassName: string }).ingressClassName).toBe('apisix');
  });

  it('writes maxTrafficWeight − W to stable', () => {
    const out = edit.translate(apisixRoute(), weights(3, 10)) as RouteObject;
    expect(rulesOf(out)[0]!.backends).toMatchObject([{ weight: 7 }, { weight: 3 }]);
  });

  it('a second call with the same weights changes nothing (idempotent)', () => {
    const once = edit.translate(apisixRoute(), weights(20)) as RouteObject;
    expect(edit.translate(once, weights(20))).toEqual(once);
  });

  it.each([
    [undefined, 'ApisixRoute shop/web-route: metadata.name: not found'],
    [{ metadata: {}, spec: {} }, 'ApisixRoute shop/web-route: spec.http: missing or not a list'],
    [
      { metadata: {}, spec: { http: [{ name: 'other', backends: [] }] } },
      'ApisixRoute shop/web-route: spec.http[].name: no rule is named "web"',
    ],
    [
      {
        metadata: {},
        spec: { http: [{ name: 'web', backends: [{ serviceName: 'web-stable', servicePort: 80 }] }] },
      },
      'ApisixRoute shop/web-route: spec.http[0].backends: no backend of rule "web" names the canaryService "web-canary"',
    ],
  ])('refuses a route it cannot weight, naming the field', (live, message) => {
    const out = edit.translate(live as RouteObject | undefined, weights(20));
    expect(out).toBeInstanceOf(RouteTranslationError);
    expect((out as Error).message).toBe(message);
  });

  it('reads each named rule back; an unset weight is APISIX default (100)', () => {
    expect(edit.readWeights!(apisixRoute(), services)).toEqual([
      { route: 'rule web', canary: 100, stable: 100 },
    ]);
    const written = edit.translate(apisixRoute(), weights(20)) as RouteObject;
    expect(edit.readWeights!(written, services)).toEqual([{ route: 'rule web', canary: 20, stable: 80 }]);
  });

  it('a header route is a copy of the rule, one priority higher, matching the headers, to the canary only', () => {
    const live = edit.translate(apisixRoute(), weights(20)) as RouteObject;
    const out = edit.setHeaderRoute!(
      live,
      {
        name: 'set-header',
        match: [
          { headerName: 'trace', headerValue: { exact: 'debug' } },
          { headerName: 'x-user', headerValue: { prefix: 'beta.' } },
        ],
      },
      services,
    ) as RouteObject;
    const rules = rulesOf(out);
    expect(rules.map((rule) => rule.name)).toEqual(['web', 'docs', 'set-header']);
    expect(rules[2]).toEqual({
      name: 'set-header',
      priority: 3,
      match: {
        paths: ['/*'],
        hosts: ['shop.example'],
        methods: ['GET'],
        exprs: [
          { subject: { scope: 'Header', name: 'trace' }, op: 'Equal', value: 'debug' },
          { subject: { scope: 'Header', name: 'x-user' }, op: 'RegexMatch', value: '^beta\\..*' },
        ],
      },
      plugins: [{ name: 'cors', enable: true }],
      backends: [{ serviceName: 'web-canary', servicePort: 80, weight: 100 }],
    });
    // The weights are not the header rule's: a setWeight leaves it alone.
    const moved = edit.translate(out, weights(50)) as RouteObject;
    expect(rulesOf(moved)[2]).toEqual(rules[2]);
    expect(edit.readWeights!(moved, services)).toEqual([{ route: 'rule web', canary: 50, stable: 50 }]);
    // Set again: replaced, not added; without match: removed.
    const again = edit.setHeaderRoute!(
      moved,
      { name: 'set-header', match: [{ headerName: 'trace', headerValue: { regex: 'de.*' } }] },
      services,
    ) as RouteObject;
    expect(rulesOf(again).map((rule) => rule.name)).toEqual(['web', 'docs', 'set-header']);
    expect(rulesOf(again)[2]!.match!['exprs']).toEqual([
      { subject: { scope: 'Header', name: 'trace' }, op: 'RegexMatch', value: 'de.*' },
    ]);
    const removed = edit.setHeaderRoute!(again, { name: 'set-header' }, services);
    expect(removed).toEqual(edit.translate(live, weights(50)));
  });

  it('with several weighted rules, one header rule each (name, name-1, …)', () => {
    const two = apisixRouteEdit({ route: 'web-route', rules: ['web', 'web-b'] }, 'shop');
    const live = apisixRoute();
    const spec = live['spec'] as { http: Rule[] };
    spec.http.push({ ...spec.http[0]!, name: 'web-b', priority: undefined });
    const out = two.setHeaderRoute!(
      live,
      { name: 'h', match: [{ headerName: 'trace', headerValue: { exact: 'on' } }] },
      services,
    ) as RouteObject;
    expect(rulesOf(out).map((rule) => [rule.name, rule.priority])).toEqual([
      ['web', 2],
      ['docs', undefined],
      ['web-b', undefined],
      ['h', 3],
      ['h-1', 1],
    ]);
  });
});

describe('routesOfRollout with trafficRouting.apisix', () => {
  it('weights the rule named like the route when no rules are listed, as Argo', () => {
    const rollout = aRollout()
      .withCanary({
        canaryService: 'web-canary',
        stableService: 'web-stable',
        trafficRouting: { apisix: { route: { name: 'web' } } },
      })
      .build();
    const routes = routesOfRollout(rollout) as RolloutRoutes;
    expect(routes.providers).toEqual(['apisix']);
    const live = apisixRoute();
    (live['spec'] as { http: Rule[] }).http[0]!.name = 'web';
    expect(routes.edits[0]!.name).toBe('web');
    expect(routes.edits[0]!.readWeights!(live, services)).toEqual([
      { route: 'rule web', canary: 100, stable: 100 },
    ]);
  });

  it('a block naming no ApisixRoute is an error naming the field', () => {
    const rollout = aRollout()
      .withCanary({ canaryService: 'c', stableService: 's', trafficRouting: { apisix: { route: {} } } })
      .build();
    expect((routesOfRollout(rollout) as Error).message).toBe(
      'Rollout default/web: spec.strategy.canary.trafficRouting.apisix.route.name: must name the ApisixRoute (a non-empty string)',
    );
  });
});
