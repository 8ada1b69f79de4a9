// The Istio translators: VirtualService routes weighted by host or subset, DestinationRule subsets pinned to the pod hashes.
import { describe, expect, it } from 'vitest';
import {
  RouteTranslationError,
  destinationRuleEdit,
  virtualServiceEdit,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { readIstioConfig, splitIstioName } from '../../../src/manifest/traffic-routing.ts';

const hosts = (canary: number) => ({
  canary,
  total: 100,
  canaryService: 'web-canary',
  stableService: 'web-stable',
  stableHash: 'aaa111',
  canaryHash: 'bbb222',
});
const subsets = { name: 'web', canarySubsetName: 'canary', stableSubsetName: 'stable' };
const bySubset = (canary: number) => ({
  canary,
  total: 100,
  canaryService: '',
  stableService: '',
  stableHash: 'aaa111',
  canaryHash: 'bbb222' as string | undefined,
});
const ref = (
  fields: Partial<{
    routes: string[];
    tlsRoutes: Array<{ port?: number; sniHosts: string[] }>;
    tcpRoutes: Array<{ port?: number }>;
  }> = {},
) => ({
  name: 'web',
  routes: [],
  tlsRoutes: [],
  tcpRoutes: [],
  ...fields,
});

const hostRoute = (name?: string) => ({
  ...(name ? { name } : {}),
  route: [
    { destination: { host: 'web-stable', port: { number: 80 } }, weight: 100 },
    { destination: { host: 'web-canary.shop.svc.cluster.local', port: { number: 80 } }, weight: 0 },
  ],
});
const vs = (spec: Record<string, unknown>): RouteObject => ({
  apiVersion: 'networking.istio.io/v1',
  kind: 'VirtualService',
  metadata: { name: 'web', namespace: 'shop', resourceVersion: '4' },
  spec: { hosts: ['web'], gateways: ['edge'], ...spec },
});
const weightsOf = (out: unknown, kind = 'http', index = 0) =>
  ((out as RouteObject)['spec'] as Record<string, Array<{ route: Array<{ weight: number }> }>>)[kind]![
    index
  ]!.route.map((d) => d.weight);

describe('virtualServiceEdit', () => {
  it('weights the only HTTP route, unnamed, by host (the part before the first dot)', () => {
    const out = virtualServiceEdit(ref(), 'shop', undefined, []).translate(
      vs({ http: [hostRoute()] }),
      hosts(20),
    );
    expect(weightsOf(out)).toEqual([80, 20]);
    expect((out as RouteObject)['metadata']).toEqual({
      name: 'web',
      namespace: 'shop',
      resourceVersion: '4',
    });
  });

  it('weights HTTP routes by name and leaves the others as read', () => {
    const other = { name: 'docs', route: [{ destination: { host: 'docs' } }] };
    const live = vs({ http: [other, hostRoute('primary')] });
    const out = virtualServiceEdit(ref({ routes: ['primary'] }), 'shop', undefined, []).translate(
      live,
      hosts(50),
    );
    expect(weightsOf(out, 'http', 1)).toEqual([50, 50]);
    expect(((out as RouteObject)['spec'] as { http: unknown[] }).http[0]).toEqual(other);
  });

  it('skips managed routes when choosing the only route', () => {
    const header = { name: 'canary-header', route: [{ destination: { host: 'web-canary' } }] };
    const out = virtualServiceEdit(ref(), 'shop', undefined, ['canary-header']).translate(
      vs({ http: [header, hostRoute()] }),
      hosts(10),
    );
    expect(weightsOf(out, 'http', 1)).toEqual([90, 10]);
    expect(((out as RouteObject)['spec'] as { http: unknown[] }).http[0]).toEqual(header);
  });

  it('weights by subset with a DestinationRule and drops destinations that are neither (as Argo)', () => {
    const live = vs({
      http: [
        {
          route: [
            { destination: { host: 'web', subset: 'stable' }, weight: 90 },
            { destination: { host: 'web', subset: 'canary' }, weight: 5 },
            { destination: { host: 'web', subset: 'old-experiment' }, weight: 5 },
          ],
        },
      ],
    });
    const out = virtualServiceEdit(ref(), 'shop', subsets, []).translate(live, bySubset(30));
    expect(((out as RouteObject)['spec'] as { http: Array<{ route: unknown[] }> }).http[0]!.route).toEqual([
      { destination: { host: 'web', subset: 'stable' }, weight: 70 },
      { destination: { host: 'web', subset: 'canary' }, weight: 30 },
    ]);
  });

  it('weights TLS routes by port and SNI hosts and TCP routes by port', () => {
    const tls = (port: number, sniHosts: string[]) => ({ match: [{ port, sniHosts }], ...hostRoute() });
    const tcp = (port: number) => ({ match: [{ port }], ...hostRoute() });
    const live = vs({ tls: [tls(443, ['a.example']), tls(443, ['b.example'])], tcp: [tcp(5432), tcp(6379)] });
    const edit = virtualServiceEdit(
      ref({ tlsRoutes: [{ port: 443, sniHosts: ['b.example'] }], tcpRoutes: [{ port: 6379 }] }),
      'shop',
      undefined,
      [],
    );
    const out = edit.translate(live, hosts(40));
    expect([weightsOf(out, 'tls', 0), weightsOf(out, 'tls', 1)]).toEqual([
      [100, 0],
      [60, 40],
    ]);
    expect([weightsOf(out, 'tcp', 0), weightsOf(out, 'tcp', 1)]).toEqual([
      [100, 0],
      [60, 40],
    ]);
  });

  it('is idempotent', () => {
    const edit = virtualServiceEdit(ref(), 'shop', undefined, []);
    const once = edit.translate(vs({ http: [hostRoute()] }), hosts(20)) as RouteObject;
    expect(edit.translate(once, hosts(20))).toEqual(once);
  });

  it.each([
    { name: 'missing', live: undefined, r: ref(), code: 'traffic.route_missing', field: 'metadata.name' },
    {
      name: 'two unnamed routes and none named',
      live: vs({ http: [hostRoute(), hostRoute()] }),
      r: ref(),
      code: 'traffic.route_malformed',
      field: 'spec.http',
    },
    {
      name: 'a named route that is not there',
      live: vs({ http: [hostRoute('a')] }),
      r: ref({ routes: ['primary'] }),
      code: 'traffic.backend_not_found',
      field: 'spec.http[].name',
    },
    {
      name: 'no canary destination',
      live: vs({ http: [{ route: [{ destination: { host: 'web-stable' } }] }] }),
      r: ref(),
      code: 'traffic.backend_not_found',
      field: 'spec.http[0].route',
    },
  ])('refuses a VirtualService with $name, naming it and the field', ({ live, r, code, field }) => {
    const out = virtualServiceEdit(r, 'shop', undefined, []).translate(live, hosts(20));
    expect(out).toBeInstanceOf(RouteTranslationError);
    expect(out).toMatchObject({ code, object: 'VirtualService shop/web', field });
  });
});

describe('destinationRuleEdit', () => {
  const dr = (subsetList: unknown[]): RouteObject => ({
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { host: 'web', trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' } }, subsets: subsetList },
  });
  const edit = destinationRuleEdit(subsets, 'shop');

  it('pins canary and stable subsets to the pod hashes, other subsets and fields kept', () => {
    const live = dr([
      { name: 'stable', labels: { app: 'web' } },
      { name: 'canary', labels: { app: 'web' } },
      { name: 'v0', labels: { version: 'v0' } },
    ]);
    const out = edit.translate(live, bySubset(20)) as RouteObject;
    expect(out['spec']).toEqual({
      host: 'web',
      trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' } },
      subsets: [
        { name: 'stable', labels: { app: 'web', 'rollouts-pod-template-hash': 'aaa111' } },
        { name: 'canary', labels: { app: 'web', 'rollouts-pod-template-hash': 'bbb222' } },
        { name: 'v0', labels: { version: 'v0' } },
      ],
    });
    expect(edit.translate(out, bySubset(20))).toEqual(out);
  });

  it('with no canary, removes the canary subset hash', () => {
    const live = dr([
      { name: 'stable', labels: { 'rollouts-pod-template-hash': 'old' } },
      { name: 'canary', labels: { 'rollouts-pod-template-hash': 'bbb222' } },
    ]);
    const out = edit.translate(live, { ...bySubset(0), canaryHash: undefined }) as RouteObject;
    expect((out['spec'] as { subsets: unknown[] }).subsets).toEqual([
      { name: 'stable', labels: { 'rollouts-pod-template-hash': 'aaa111' } },
      { name: 'canary', labels: {} },
    ]);
  });

  it('names a missing subset', () => {
    const out = edit.translate(dr([{ name: 'stable' }]), bySubset(20));
    expect(out).toMatchObject({
      code: 'traffic.backend_not_found',
      object: 'DestinationRule shop/web',
      field: 'spec.subsets[].name',
      message: 'DestinationRule shop/web: spec.subsets[].name: no subset named "canary"',
    });
  });
});

describe('readIstioConfig', () => {
  it("reads Istio's name.namespace shorthand as Argo does", () => {
    expect(splitIstioName('web')).toEqual({ name: 'web' });
    expect(splitIstioName('web.edge')).toEqual({ name: 'web', namespace: 'edge' });
    expect(splitIstioName('web.v2.edge.cluster.local')).toEqual({ name: 'web.v2', namespace: 'edge' });
  });

  it('names what is missing', () => {
    expect(readIstioConfig({})).toEqual([
      { field: [], message: 'names no VirtualService: set virtualService or virtualServices' },
    ]);
    expect(
      readIstioConfig({ virtualServices: [{ routes: ['a'] }], destinationRule: { name: 'web' } }),
    ).toEqual([
      { field: ['virtualServices', 0, 'name'], message: 'must name a VirtualService' },
      { field: ['destinationRule', 'canarySubsetName'], message: 'required (a non-empty string)' },
      { field: ['destinationRule', 'stableSubsetName'], message: 'required (a non-empty string)' },
    ]);
  });
});
