// Each provider's weight reader: a route object as read → the canary and stable weight of every route the translator weights.
import { describe, expect, it } from 'vitest';
import {
  RouteTranslationError,
  destinationRuleEdit,
  gatewayRouteEdit,
  trafficSplitEdit,
  virtualServiceEdit,
  type RouteEdit,
  type RouteObject,
} from '../../../src/traffic/index.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number) => ({
  ...services,
  canary,
  total: 100,
  stableHash: 'aaa',
  canaryHash: 'bbb',
});

function read(edit: RouteEdit, live: RouteObject, using = services) {
  if (edit.readWeights === undefined) throw new Error('no reader');
  return edit.readWeights(live, using);
}

describe('Gateway API reader', () => {
  const edit = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'web', useHeaderRoutes: true }, 'shop', ['hdr']);
  const route = (rules: unknown[]): RouteObject => ({ metadata: { name: 'web' }, spec: { rules } });
  const split = (stable?: number, canary?: number) => ({
    backendRefs: [
      { name: 'web-stable', port: 80, ...(stable !== undefined ? { weight: stable } : {}) },
      { name: 'web-canary', port: 80, ...(canary !== undefined ? { weight: canary } : {}) },
    ],
  });

  it('reads each weighted rule by name or index; other rules and header rules are not listed', () => {
    const live = route([
      split(80, 20),
      { name: 'api', ...split(70, 30) },
      { backendRefs: [{ name: 'admin', port: 80 }] },
      { name: 'hdr', backendRefs: [{ name: 'web-canary', port: 80 }] },
    ]);
    expect(read(edit, live)).toEqual([
      { route: 'rule 0', canary: 20, stable: 80 },
      { route: 'rule api', canary: 30, stable: 70 },
    ]);
  });

  it('reads an unset weight as the Gateway API default 1, a missing backend as undefined', () => {
    expect(read(edit, route([split()]))).toEqual([{ route: 'rule 0', canary: 1, stable: 1 }]);
    expect(read(edit, route([{ backendRefs: [{ name: 'web-stable', weight: 100 }] }]))).toEqual([
      { route: 'rule 0', canary: undefined, stable: 100 },
    ]);
  });

  it('reads back exactly what translate wrote', () => {
    const written = edit.translate(route([split(100, 0), split(100, 0)]), weights(35)) as RouteObject;
    expect(read(edit, written)).toEqual([
      { route: 'rule 0', canary: 35, stable: 65 },
      { route: 'rule 1', canary: 35, stable: 65 },
    ]);
  });

  it('refuses a route without rules, naming the field', () => {
    const error = read(edit, { spec: {} });
    expect(error).toBeInstanceOf(RouteTranslationError);
    expect((error as RouteTranslationError).code).toBe('traffic.route_malformed');
    expect((error as RouteTranslationError).message).toBe(
      'HTTPRoute shop/web: spec.rules: missing or not a list',
    );
  });
});

describe('Istio reader', () => {
  const ref = (fields: Partial<{ routes: string[]; tcpRoutes: Array<{ port?: number }> }> = {}) => ({
    name: 'web',
    routes: [],
    tlsRoutes: [],
    tcpRoutes: [],
    ...fields,
  });
  const destinations = (stable?: number, canary?: number) => [
    { destination: { host: 'web-stable' }, ...(stable !== undefined ? { weight: stable } : {}) },
    {
      destination: { host: 'web-canary.shop.svc.cluster.local' },
      ...(canary !== undefined ? { weight: canary } : {}),
    },
  ];
  const vs = (spec: Record<string, unknown>): RouteObject => ({ metadata: { name: 'web' }, spec });

  it('reads the named HTTP routes, by host', () => {
    const edit = virtualServiceEdit(ref({ routes: ['primary'] }), 'shop', undefined, []);
    const live = vs({
      http: [
        { name: 'other', route: destinations(50, 50) },
        { name: 'primary', route: destinations(100, 0) },
      ],
    });
    expect(read(edit, live)).toEqual([{ route: 'route primary', canary: 0, stable: 100 }]);
  });

  it('reads by subset with a DestinationRule, and the DestinationRule carries no weights', () => {
    const rule = { name: 'web', canarySubsetName: 'canary', stableSubsetName: 'stable' };
    const edit = virtualServiceEdit(ref(), 'shop', rule, []);
    const live = vs({
      http: [
        {
          route: [
            { destination: { host: 'web', subset: 'stable' }, weight: 60 },
            { destination: { host: 'web', subset: 'canary' }, weight: 40 },
          ],
        },
      ],
    });
    expect(read(edit, live, { canaryService: '', stableService: '' })).toEqual([
      { route: 'http[0]', canary: 40, stable: 60 },
    ]);
    expect(read(destinationRuleEdit(rule, 'shop'), { spec: { subsets: [] } })).toEqual([]);
  });

  it('reads TCP routes by port, a lone destination without weight as 100 and its missing partner as undefined', () => {
    const edit = virtualServiceEdit(ref({ tcpRoutes: [{ port: 5432 }] }), 'shop', undefined, []);
    const live = vs({
      tcp: [
        { match: [{ port: 80 }], route: destinations(10, 90) },
        { match: [{ port: 5432 }], route: [{ destination: { host: 'web-stable' } }] },
      ],
    });
    expect(read(edit, live)).toEqual([{ route: 'tcp[1]', canary: undefined, stable: 100 }]);
  });

  it('reads back exactly what translate wrote, mirror routes not read twice', () => {
    const edit = virtualServiceEdit(ref({ routes: ['primary'] }), 'shop', undefined, ['mirror']);
    const live = vs({
      http: [
        { name: 'mirror', route: destinations(100, 0), mirror: { host: 'web-canary' } },
        { name: 'primary', route: destinations(100, 0) },
      ],
    });
    const written = edit.translate(live, weights(20)) as RouteObject;
    expect(read(edit, written)).toEqual([{ route: 'route primary', canary: 20, stable: 80 }]);
  });

  it('refuses what translate refuses: two unnamed HTTP routes', () => {
    const edit = virtualServiceEdit(ref(), 'shop', undefined, []);
    const error = read(edit, vs({ http: [{ route: destinations(1, 1) }, { route: destinations(1, 1) }] }));
    expect((error as RouteTranslationError).code).toBe('traffic.route_malformed');
    expect((error as RouteTranslationError).field).toBe('spec.http');
  });
});

describe('SMI reader', () => {
  const edit = trafficSplitEdit({}, 'shop', { name: 'web', uid: 'u1' });

  it('reads the two backends of the split as one entry for the whole object', () => {
    const live = {
      spec: {
        service: 'web-stable',
        backends: [
          { service: 'web-canary', weight: 25 },
          { service: 'web-stable', weight: 75 },
          { service: 'other', weight: 5 },
        ],
      },
    };
    expect(read(edit, live)).toEqual([{ route: '', canary: 25, stable: 75 }]);
  });

  it('reads a v1alpha1 quantity string and a backend without weight (0), a missing backend as undefined', () => {
    const live = { spec: { backends: [{ service: 'web-canary', weight: '30' }, { service: 'web-stable' }] } };
    expect(read(edit, live)).toEqual([{ route: '', canary: 30, stable: 0 }]);
    expect(read(edit, { spec: { backends: [{ service: 'web-stable', weight: 100 }] } })).toEqual([
      { route: '', canary: undefined, stable: 100 },
    ]);
  });

  it('refuses a split without backends', () => {
    const error = read(edit, { spec: { service: 'web-stable' } });
    expect((error as RouteTranslationError).message).toBe(
      'TrafficSplit shop/web: spec.backends: missing or not a list',
    );
  });
});
