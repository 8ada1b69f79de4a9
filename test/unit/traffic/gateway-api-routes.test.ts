// The Gateway API translator: route in → route out; only the canary/stable backendRefs' weights change.
import { describe, expect, it } from 'vitest';
import {
  GATEWAY_API_RESOURCES,
  RouteTranslationError,
  gatewayRouteEdit,
  type RouteObject,
} from '../../../src/traffic/index.ts';

const weights = (canary: number, total = 100) => ({
  canary,
  total,
  canaryService: 'web-canary',
  stableService: 'web-stable',
  stableHash: 'abc123',
});

function anHttpRoute(rules: unknown[]): RouteObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'shop', resourceVersion: '7', labels: { team: 'a' } },
    spec: { parentRefs: [{ name: 'gw' }], hostnames: ['web.example'], rules },
  };
}

const primary = {
  matches: [{ path: { type: 'PathPrefix', value: '/' } }],
  backendRefs: [
    { name: 'web-stable', port: 80, weight: 100 },
    { name: 'web-canary', port: 80, weight: 0 },
  ],
};
const other = {
  matches: [{ path: { type: 'PathPrefix', value: '/admin' } }],
  backendRefs: [{ name: 'admin', port: 80 }],
};
const edit = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'web', useHeaderRoutes: true }, 'shop', [
  'canary-header',
]);

describe('gatewayRouteEdit', () => {
  it('edits the route kind named, in the API group the plugin edits', () => {
    expect(edit.resource).toEqual(GATEWAY_API_RESOURCES.HTTPRoute);
    expect([edit.namespace, edit.name]).toEqual(['shop', 'web']);
    const grpc = gatewayRouteEdit({ kind: 'GRPCRoute', name: 'rpc', useHeaderRoutes: false }, 'shop', []);
    expect(grpc.resource.plural).toBe('grpcroutes');
  });

  it.each([
    { canary: 20, total: 100, want: [80, 20] },
    { canary: 50, total: 100, want: [50, 50] },
    { canary: 100, total: 100, want: [0, 100] },
    { canary: 0, total: 100, want: [100, 0] },
    { canary: 200, total: 1000, want: [800, 200] },
  ])('canary $canary of $total → stable/canary weights $want', ({ canary, total, want }) => {
    const out = edit.translate(anHttpRoute([primary, other]), weights(canary, total)) as RouteObject;
    const rules = (out['spec'] as { rules: Array<{ backendRefs: Array<{ weight?: number }> }> }).rules;
    expect(rules[0]!.backendRefs.map((ref) => ref.weight)).toEqual(want);
  });

  it('keeps other rules, other backends and every other field as read', () => {
    const withExtra = {
      ...primary,
      backendRefs: [...primary.backendRefs, { name: 'mirror', port: 80, weight: 5 }],
      filters: [{ type: 'RequestHeaderModifier' }],
    };
    const live = anHttpRoute([withExtra, other]);
    const out = edit.translate(live, weights(30)) as RouteObject;
    expect(out['metadata']).toEqual(live['metadata']);
    const spec = out['spec'] as Record<string, unknown> & { rules: unknown[] };
    expect(spec['parentRefs']).toEqual([{ name: 'gw' }]);
    expect(spec['hostnames']).toEqual(['web.example']);
    expect(spec.rules[1]).toEqual(other);
    expect(spec.rules[0]).toEqual({
      ...withExtra,
      backendRefs: [
        { name: 'web-stable', port: 80, weight: 70 },
        { name: 'web-canary', port: 80, weight: 30 },
        { name: 'mirror', port: 80, weight: 5 },
      ],
    });
  });

  it('weights the two services in every rule that has them', () => {
    const out = edit.translate(anHttpRoute([primary, primary]), weights(40)) as RouteObject;
    const rules = (out['spec'] as { rules: Array<{ backendRefs: Array<{ weight?: number }> }> }).rules;
    expect(rules.map((rule) => rule.backendRefs.map((ref) => ref.weight))).toEqual([
      [60, 40],
      [60, 40],
    ]);
  });

  it('leaves a managed route (named in managedRoutes) alone', () => {
    const header = { name: 'canary-header', backendRefs: [{ name: 'web-canary', port: 80 }] };
    const out = edit.translate(anHttpRoute([header, primary]), weights(10)) as RouteObject;
    expect((out['spec'] as { rules: unknown[] }).rules[0]).toEqual(header);
  });

  it('is idempotent: translating its own output gives the same object', () => {
    const once = edit.translate(anHttpRoute([primary, other]), weights(20)) as RouteObject;
    expect(edit.translate(once, weights(20))).toEqual(once);
  });

  it('does not touch the object it was given', () => {
    const live = anHttpRoute([primary]);
    const copy = structuredClone(live);
    edit.translate(live, weights(50));
    expect(live).toEqual(copy);
  });

  it.each([
    { name: 'missing route', live: undefined, code: 'traffic.route_missing', field: 'metadata.name' },
    { name: 'no spec', live: { metadata: { name: 'web' } }, code: 'traffic.route_malformed', field: 'spec' },
    { name: 'no rules', live: { spec: {} }, code: 'traffic.route_malformed', field: 'spec.rules' },
    {
      name: 'backendRefs not a list',
      live: { spec: { rules: [{ backendRefs: 'web-canary' }] } },
      code: 'traffic.route_malformed',
      field: 'spec.rules[0].backendRefs',
    },
    {
      name: 'no canary backend',
      live: anHttpRoute([{ backendRefs: [{ name: 'web-stable', port: 80 }] }]),
      code: 'traffic.backend_not_found',
      field: 'spec.rules[].backendRefs',
    },
    {
      name: 'no stable backend',
      live: anHttpRoute([{ backendRefs: [{ name: 'web-canary', port: 80 }] }]),
      code: 'traffic.backend_not_found',
      field: 'spec.rules[].backendRefs',
    },
  ])('refuses a route with $name, naming the object and the field', ({ live, code, field }) => {
    const out = edit.translate(live as RouteObject | undefined, weights(20));
    expect(out).toBeInstanceOf(RouteTranslationError);
    const error = out as RouteTranslationError;
    expect([error.code, error.object, error.field]).toEqual([code, 'HTTPRoute shop/web', field]);
    expect(error.message).toContain(`HTTPRoute shop/web: ${field}`);
  });
});
