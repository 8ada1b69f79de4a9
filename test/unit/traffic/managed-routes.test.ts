// Header and mirror routes: added (managedRoutes order, above the primary route in Istio), replaced, and removed.
import { describe, expect, it } from 'vitest';
import { gatewayRouteEdit, virtualServiceEdit, type RouteObject } from '../../../src/traffic/index.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };

describe('Gateway API header route', () => {
  const primary = {
    matches: [{ path: { type: 'PathPrefix', value: '/' } }],
    filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x', value: '1' }] } }],
    backendRefs: [
      { name: 'web-stable', port: 80, weight: 80 },
      { name: 'web-canary', port: 8080, weight: 20 },
    ],
  };
  const docs = {
    matches: [{ path: { type: 'PathPrefix', value: '/docs' } }],
    backendRefs: [{ name: 'docs', port: 80 }],
  };
  const live: RouteObject = {
    metadata: { name: 'web', namespace: 'shop' },
    spec: { rules: [primary, docs] },
  };
  const edit = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'web', useHeaderRoutes: true }, 'shop', [
    'canary-header',
  ]);
  const route = {
    name: 'canary-header',
    match: [
      { headerName: 'x-canary', headerValue: { exact: 'yes' } },
      { headerName: 'x-user', headerValue: { prefix: 'qa.' } },
    ],
  };

  it('adds a rule per weighted rule: its matches plus the headers, its filters, the canary only', () => {
    const out = edit.setHeaderRoute!(live, route, services) as RouteObject;
    const rules = (out['spec'] as { rules: unknown[] }).rules;
    expect(rules.slice(0, 2)).toEqual([primary, docs]);
    expect(rules[2]).toEqual({
      name: 'canary-header',
      matches: [
        {
          path: { type: 'PathPrefix', value: '/' },
          headers: [
            { type: 'Exact', name: 'x-canary', value: 'yes' },
            { type: 'RegularExpression', name: 'x-user', value: '^qa\\..*' },
          ],
        },
      ],
      filters: primary.filters,
      backendRefs: [{ group: '', kind: 'Service', name: 'web-canary', port: 8080 }],
    });
  });

  it('replaces its earlier rule, is left alone by the weights, and is removed when match is absent', () => {
    const once = edit.setHeaderRoute!(live, route, services) as RouteObject;
    expect(edit.setHeaderRoute!(once, route, services)).toEqual(once);
    const reweighed = edit.translate(once, {
      ...services,
      canary: 50,
      total: 100,
      stableHash: 'a',
    }) as RouteObject;
    expect((reweighed['spec'] as { rules: unknown[] }).rules[2]).toEqual(
      (once['spec'] as { rules: unknown[] }).rules[2],
    );
    expect(edit.setHeaderRoute!(once, { name: 'canary-header' }, services)).toEqual(live);
  });

  it('leaves a route with useHeaderRoutes false as it is', () => {
    const off = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'web', useHeaderRoutes: false }, 'shop', [
      'canary-header',
    ]);
    expect(off.setHeaderRoute!(live, route, services)).toEqual(live);
  });

  it('has no header routes on TCP routes', () => {
    expect(
      gatewayRouteEdit({ kind: 'TCPRoute', name: 't', useHeaderRoutes: true }, 'shop', []).setHeaderRoute,
    ).toBeUndefined();
  });
});

describe('Istio header and mirror routes', () => {
  const primary = {
    name: 'primary',
    route: [
      { destination: { host: 'web', subset: 'stable', port: { number: 80 } }, weight: 70 },
      { destination: { host: 'web', subset: 'canary', port: { number: 80 } }, weight: 30 },
    ],
  };
  const live: RouteObject = {
    metadata: { name: 'web', namespace: 'shop' },
    spec: { hosts: ['web'], http: [primary] },
  };
  const subsets = { name: 'web', canarySubsetName: 'canary', stableSubsetName: 'stable' };
  const edit = virtualServiceEdit(
    { name: 'web', routes: ['primary'], tlsRoutes: [], tcpRoutes: [] },
    'shop',
    subsets,
    ['mirror-1', 'canary-header'],
  );
  const none = { canaryService: '', stableService: '' };
  const http = (out: unknown) =>
    ((out as RouteObject)['spec'] as { http: Array<Record<string, unknown>> }).http;

  it('puts the managed routes above the primary route, in managedRoutes order', () => {
    const withHeader = edit.setHeaderRoute!(
      live,
      { name: 'canary-header', match: [{ headerName: 'x-canary', headerValue: { exact: 'yes' } }] },
      none,
    );
    expect(http(withHeader)).toEqual([
      {
        name: 'canary-header',
        match: [{ headers: { 'x-canary': { exact: 'yes' } } }],
        route: [{ destination: { host: 'web', subset: 'canary', port: { number: 80 } }, weight: 100 }],
      },
      primary,
    ]);
    const withMirror = edit.setMirrorRoute!(
      withHeader as RouteObject,
      { name: 'mirror-1', match: [{ method: { exact: 'GET' }, path: { prefix: '/api' } }], percentage: 25 },
      none,
    );
    expect(http(withMirror).map((route) => route['name'])).toEqual(['mirror-1', 'canary-header', 'primary']);
    expect(http(withMirror)[0]).toEqual({
      name: 'mirror-1',
      match: [{ method: { exact: 'GET' }, uri: { prefix: '/api' } }],
      route: primary.route,
      mirror: { host: 'web', subset: 'canary', port: { number: 80 } },
      mirrorPercentage: { value: 25 },
    });
  });

  it("weights a mirror route's destinations with the split, and removes each route when match is absent", () => {
    const mirrored = edit.setMirrorRoute!(
      live,
      { name: 'mirror-1', match: [{ path: { exact: '/' } }] },
      none,
    ) as RouteObject;
    const reweighed = edit.translate(mirrored, {
      ...none,
      canary: 50,
      total: 100,
      stableHash: 'a',
      canaryHash: 'b',
    });
    expect(
      http(reweighed).map((route) => (route['route'] as Array<{ weight: number }>).map((d) => d.weight)),
    ).toEqual([
      [50, 50],
      [50, 50],
    ]);
    expect(edit.setMirrorRoute!(mirrored, { name: 'mirror-1' }, none)).toEqual(live);
  });
});
