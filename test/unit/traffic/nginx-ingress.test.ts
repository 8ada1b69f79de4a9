// The NGINX translator: the canary Ingress built from the stable one, created once a canary exists, weighted, a foreign one refused.
import { describe, expect, it } from 'vitest';
import {
  RouteTranslationError,
  canaryIngressEdit,
  canaryIngressName,
  type RouteObject,
  type RouteWeights,
} from '../../../src/traffic/index.ts';
import { NGINX_DEFAULT_ANNOTATION_PREFIX, type NginxConfig } from '../../../src/manifest/traffic-routing.ts';

const owner = { name: 'web', uid: 'uid-web' };
const ownerReference = {
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'Rollout',
  name: 'web',
  uid: 'uid-web',
  controller: true,
  blockOwnerDeletion: true,
};
const config = (fields: Partial<NginxConfig> = {}): NginxConfig => ({
  stableIngresses: ['web'],
  annotationPrefix: NGINX_DEFAULT_ANNOTATION_PREFIX,
  additionalIngressAnnotations: {},
  canaryIngressAnnotations: {},
  ...fields,
});
const weights = (canary: number, more: Partial<RouteWeights> = {}): RouteWeights => ({
  canary,
  total: 100,
  canaryService: 'web-canary',
  stableService: 'web-stable',
  stableHash: 'abc123',
  canaryHash: 'def456',
  ...more,
});
const path = (service: string, at = '/') => ({
  path: at,
  pathType: 'Prefix',
  backend: { service: { name: service, port: { name: 'http' } } },
});
const stableIngress = (spec: Record<string, unknown>, annotations?: Record<string, string>): RouteObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: {
    name: 'web',
    namespace: 'shop',
    resourceVersion: '7',
    ...(annotations ? { annotations } : {}),
  },
  spec,
});
const plainStable = stableIngress({
  ingressClassName: 'nginx',
  rules: [{ host: 'shop.example.com', http: { paths: [path('web-stable')] } }],
});
const edit = (fields: Partial<NginxConfig> = {}) => canaryIngressEdit(config(fields), 'web', 'shop', owner);

describe('canaryIngressName', () => {
  it("is Argo's <rollout>-<stableIngress>-canary, cut to 253 characters", () => {
    expect(canaryIngressName('web', 'edge')).toBe('web-edge-canary');
    const long = canaryIngressName('r'.repeat(200), 's'.repeat(100));
    expect(long).toHaveLength(253);
    expect(long.endsWith('s-canary')).toBe(true);
  });
});

describe('canaryIngressEdit', () => {
  it('edits the canary Ingress, derived from the stable one (networking.k8s.io/v1)', () => {
    const made = edit();
    expect(made).toMatchObject({
      name: 'web-web-canary',
      namespace: 'shop',
      resource: { group: 'networking.k8s.io', versions: ['v1'], plural: 'ingresses', kind: 'Ingress' },
      derivedFrom: { name: 'web', namespace: 'shop', resource: { plural: 'ingresses' } },
    });
  });

  it.each([
    {
      name: 'the only rule, its class and TLS',
      stable: stableIngress({
        ingressClassName: 'nginx',
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [{ host: 'shop.example.com', http: { paths: [path('web-stable')] } }],
      }),
      want: {
        ingressClassName: 'nginx',
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [{ host: 'shop.example.com', http: { paths: [path('web-canary')] } }],
      },
    },
    {
      name: 'only the rules that send to stableService; their other paths kept as they are',
      stable: stableIngress({
        defaultBackend: { service: { name: 'web-stable', port: { number: 80 } } },
        rules: [
          { host: 'a.example.com', http: { paths: [path('web-stable'), path('static', '/static')] } },
          { host: 'b.example.com', http: { paths: [path('other')] } },
          { host: 'c.example.com' },
        ],
      }),
      want: {
        rules: [{ host: 'a.example.com', http: { paths: [path('web-canary'), path('static', '/static')] } }],
      },
    },
  ])('writes $name', ({ stable, want }) => {
    const out = edit().translate(undefined, weights(20), stable) as RouteObject;
    expect(out['spec']).toEqual(want);
  });

  it('creates the canary Ingress owned by the rollout, with canary and canary-weight', () => {
    const out = edit().translate(undefined, weights(20), plainStable);
    expect(out).toEqual({
      kind: 'Ingress',
      metadata: {
        name: 'web-web-canary',
        namespace: 'shop',
        annotations: {
          'nginx.ingress.kubernetes.io/canary': 'true',
          'nginx.ingress.kubernetes.io/canary-weight': '20',
        },
        ownerReferences: [ownerReference],
      },
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: 'shop.example.com', http: { paths: [path('web-canary')] } }],
      },
    });
  });

  it.each<{
    name: string;
    fields: Partial<NginxConfig>;
    stableAnnotations: Record<string, string> | undefined;
    total: number;
    want: Record<string, string>;
  }>([
    {
      name: 'the ingress class annotation of the stable Ingress',
      fields: {},
      stableAnnotations: {
        'kubernetes.io/ingress.class': 'nginx',
        'nginx.ingress.kubernetes.io/rewrite-target': '/',
      },
      total: 100,
      want: {
        'kubernetes.io/ingress.class': 'nginx',
        'nginx.ingress.kubernetes.io/canary': 'true',
        'nginx.ingress.kubernetes.io/canary-weight': '30',
      },
    },
    {
      name: 'additional annotations, prefixed unless they are, and canary annotations as written',
      fields: {
        additionalIngressAnnotations: {
          'canary-by-header': 'X-Canary',
          'nginx.ingress.kubernetes.io/canary-by-cookie': 'beta',
          'canary-weight': '99',
        },
        canaryIngressAnnotations: {
          'team.example.com/owner': 'shop',
          'nginx.ingress.kubernetes.io/canary': 'no',
        },
      },
      stableAnnotations: undefined,
      total: 100,
      want: {
        'nginx.ingress.kubernetes.io/canary-by-header': 'X-Canary',
        'nginx.ingress.kubernetes.io/canary-by-cookie': 'beta',
        'team.example.com/owner': 'shop',
        'nginx.ingress.kubernetes.io/canary': 'true',
        'nginx.ingress.kubernetes.io/canary-weight': '30',
      },
    },
    {
      name: 'a custom prefix, and canary-weight-total with a maxTrafficWeight other than 100',
      fields: {
        annotationPrefix: 'custom.nginx.org',
        additionalIngressAnnotations: { 'canary-by-header': 'X' },
      },
      stableAnnotations: undefined,
      total: 1000,
      want: {
        'custom.nginx.org/canary-by-header': 'X',
        'custom.nginx.org/canary': 'true',
        'custom.nginx.org/canary-weight': '30',
        'custom.nginx.org/canary-weight-total': '1000',
      },
    },
  ])('annotates with $name', ({ fields, stableAnnotations, total, want }) => {
    const stable = stableIngress(plainStable['spec'] as Record<string, unknown>, stableAnnotations);
    const out = edit(fields).translate(undefined, weights(30, { total }), stable) as RouteObject;
    expect((out['metadata'] as { annotations: unknown }).annotations).toEqual(want);
  });

  it('creates nothing for a rollout at rest (no canary, weight 0), but does once a canary exists', () => {
    expect(edit().translate(undefined, weights(0, { canaryHash: undefined }), plainStable)).toBeUndefined();
    const created = edit().translate(undefined, weights(0), plainStable) as RouteObject;
    expect(created['metadata']).toMatchObject({
      annotations: { 'nginx.ingress.kubernetes.io/canary-weight': '0' },
    });
  });

  it('replaces the live canary Ingress: metadata kept as read, annotations and spec its own', () => {
    const live = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: {
        name: 'web-web-canary',
        namespace: 'shop',
        resourceVersion: '12',
        labels: { team: 'shop' },
        annotations: { 'nginx.ingress.kubernetes.io/canary-weight': '20', stray: 'x' },
        ownerReferences: [ownerReference],
      },
      spec: { rules: [] },
      status: { loadBalancer: {} },
    };
    const out = edit().translate(live, weights(50), plainStable) as RouteObject;
    expect(out).toEqual({
      ...live,
      metadata: {
        ...live.metadata,
        annotations: {
          'nginx.ingress.kubernetes.io/canary': 'true',
          'nginx.ingress.kubernetes.io/canary-weight': '50',
        },
      },
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: 'shop.example.com', http: { paths: [path('web-canary')] } }],
      },
    });
    // Translating what it wrote again changes nothing: a rollout at rest sends no writes.
    expect(edit().translate(out, weights(50), plainStable)).toEqual(out);
    // With no canary left (completed or aborted) it stays, at weight 0, as Argo keeps it.
    const zeroed = edit().translate(out, weights(0, { canaryHash: undefined }), plainStable) as RouteObject;
    expect((zeroed['metadata'] as { annotations: Record<string, string> }).annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/canary-weight': '0',
    });
  });

  it.each([
    {
      name: 'a missing stable Ingress (even at rest)',
      live: undefined,
      stable: undefined,
      canaryHash: undefined,
      want: {
        code: 'traffic.route_missing',
        message: 'Ingress shop/web: metadata.name: not found (the stableIngress of Rollout shop/web)',
      },
    },
    {
      name: 'a stable Ingress with no path to stableService',
      live: undefined,
      stable: stableIngress({ rules: [{ host: 'a', http: { paths: [path('other')] } }] }),
      canaryHash: 'def456',
      want: {
        code: 'traffic.backend_not_found',
        message:
          'Ingress shop/web: spec.rules[].http.paths[].backend.service.name: no path sends to the stableService "web-stable"',
      },
    },
    {
      name: 'a stable Ingress whose rules are not a list',
      live: undefined,
      stable: stableIngress({ rules: 'x' }),
      canaryHash: 'def456',
      want: { code: 'traffic.route_malformed', field: 'spec.rules' },
    },
    {
      name: 'a canary Ingress the rollout does not control',
      live: { metadata: { name: 'web-web-canary', ownerReferences: [{ ...ownerReference, uid: 'other' }] } },
      stable: plainStable,
      canaryHash: 'def456',
      want: {
        code: 'traffic.route_not_owned',
        message:
          'Ingress shop/web-web-canary: metadata.ownerReferences: not controlled by Rollout shop/web; delete it (Rollgate creates its own)',
      },
    },
  ])('refuses $name', ({ live, stable, canaryHash, want }) => {
    const out = edit().translate(live, weights(20, { canaryHash }), stable);
    expect(out).toBeInstanceOf(RouteTranslationError);
    expect(out).toMatchObject(want);
  });
});

describe('reading a canary Ingress back', () => {
  const edit = canaryIngressEdit(config(), 'web', 'prod', owner);
  const ingress = (annotations: Record<string, string>): RouteObject => ({
    kind: 'Ingress',
    metadata: { name: 'web-web-canary', namespace: 'prod', annotations },
  });
  const services = { canaryService: 'web-canary', stableService: 'web-stable' };

  it.each([
    ['canary-weight 20', { 'nginx.ingress.kubernetes.io/canary-weight': '20' }, { canary: 20, stable: 80 }],
    ['no weight yet', {}, { canary: 0, stable: 100 }],
    [
      'a weight total of 200',
      {
        'nginx.ingress.kubernetes.io/canary-weight': '50',
        'nginx.ingress.kubernetes.io/canary-weight-total': '200',
      },
      { canary: 50, stable: 150 },
    ],
  ])('%s', (_name, annotations, expected) => {
    expect(edit.readWeights?.(ingress(annotations), services)).toEqual([{ route: '', ...expected }]);
  });

  it('names the annotation that is not a whole number', () => {
    const read = edit.readWeights?.(
      ingress({ 'nginx.ingress.kubernetes.io/canary-weight': 'lots' }),
      services,
    );
    expect(read).toBeInstanceOf(RouteTranslationError);
    expect((read as RouteTranslationError).message).toContain('nginx.ingress.kubernetes.io/canary-weight');
  });
});
