// The route writer against the sandbox: no write when nothing changes, a concurrent write is re-read (never lost), clear errors.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { RouteApiMissingError, RouteWriter } from '../../../src/reconciler/route-writer.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import {
  RouteTranslationError,
  canaryIngressEdit,
  gatewayRouteEdit,
  traefikServiceEdit,
  trafficSplitEdit,
} from '../../../src/traffic/index.ts';
import { NGINX_DEFAULT_ANNOTATION_PREFIX } from '../../../src/manifest/traffic-routing.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

// The HTTPRoute cases need Gateway API's upstream CRD; the Ingress and missing-API ones run without it.
const crds = upstreamCorpus('crds', import.meta.filename);

const run = promisify(execFile);
const NS = 'default';
const weights = (canary: number) => ({
  canary,
  total: 100,
  canaryService: 'web-canary',
  stableService: 'web-stable',
  stableHash: 'abc123',
});

let sandbox: Sandbox;
let clients: KubeClients;
let tmp: TempDir;

const route = (name: string) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace: NS },
  spec: {
    parentRefs: [{ name: 'edge' }],
    rules: [
      {
        backendRefs: [
          { name: 'web-stable', port: 80, weight: 100 },
          { name: 'web-canary', port: 80, weight: 0 },
        ],
      },
    ],
  },
});

async function readRoute(name: string) {
  const found = await clients.custom.getNamespacedCustomObject({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    namespace: NS,
    plural: 'httproutes',
    name,
  });
  return toPlainObject<{
    metadata: { labels?: Record<string, string> };
    spec: { rules: Array<{ backendRefs: Array<{ name: string; weight: number }> }> };
  }>(found);
}

async function createRoute(name: string): Promise<void> {
  await clients.custom.createNamespacedCustomObject({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    namespace: NS,
    plural: 'httproutes',
    body: route(name),
  });
}

/** A Rollout to own the canary Ingress (paused: the test runs no Rollgate anyway). */
const ROLLOUT = {
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'Rollout',
  metadata: { name: 'web', namespace: NS },
  spec: {
    paused: true,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'web:1' }] },
    },
    strategy: { canary: { canaryService: 'web-canary', stableService: 'web-stable' } },
  },
};

const routeWrites = (name: string) =>
  sandbox.audit
    .entries()
    .filter((entry) => entry.resource === 'httproutes' && entry.name === name && entry.verb !== 'POST');

beforeAll(async () => {
  tmp = makeTempDir('rollgate-route-writer-');
  sandbox = await startSandbox();
  const kubeconfig = join(tmp.path, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  if (!crds.missing)
    await run('kubectl', [
      '--kubeconfig',
      kubeconfig,
      '--cache-dir',
      join(tmp.path, 'cache'),
      'apply',
      '-f',
      crds.file('gateway.networking.k8s.io_httproutes.yaml'),
    ]);
  clients = createKubeClients(sandbox.kubeConfig);
}, 60_000);

afterAll(async () => {
  await sandbox?.stop();
  tmp?.remove();
});

describe('RouteWriter', () => {
  it.skipIf(crds.missing)(
    'writes once, and sends nothing when the route already holds the weights',
    async () => {
      await createRoute('idem');
      const writer = new RouteWriter(clients);
      const edit = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'idem', useHeaderRoutes: true }, NS, []);
      expect(await writer.write(edit, weights(20))).toBe('updated');
      expect(await writer.write(edit, weights(20))).toBe('unchanged');
      expect(routeWrites('idem').map((entry) => [entry.verb, entry.code])).toEqual([['PUT', 200]]);
      const weightsRead = (await readRoute('idem')).spec.rules[0]!.backendRefs.map((ref) => ref.weight);
      expect(weightsRead).toEqual([80, 20]);
    },
  );

  it.skipIf(crds.missing)(
    're-reads after a 409 and keeps the change someone else made meanwhile',
    async () => {
      await createRoute('raced');
      // Between Rollgate's read and its write, the route's owner labels it: the write carries a stale
      // resourceVersion and the sandbox answers 409, as a real API server would.
      let raced = false;
      const custom = new Proxy(clients.custom, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (property !== 'replaceNamespacedCustomObject' || typeof value !== 'function') return value;
          return async (request: Parameters<typeof target.replaceNamespacedCustomObject>[0]) => {
            if (!raced) {
              raced = true;
              const live = toPlainObject<Record<string, unknown>>(
                await target.getNamespacedCustomObject({ ...request }),
              );
              const metadata = live['metadata'] as Record<string, unknown>;
              await target.replaceNamespacedCustomObject({
                ...request,
                body: { ...live, metadata: { ...metadata, labels: { owner: 'team-a' } } },
              });
            }
            return (value as typeof target.replaceNamespacedCustomObject).call(target, request);
          };
        },
      });
      const writer = new RouteWriter({ ...clients, custom });
      const edit = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'raced', useHeaderRoutes: true }, NS, []);
      expect(await writer.write(edit, weights(50))).toBe('updated');
      expect(routeWrites('raced').map((entry) => entry.code)).toEqual([200, 409, 200]);
      const written = await readRoute('raced');
      expect(written.metadata.labels).toEqual({ owner: 'team-a' });
      expect(written.spec.rules[0]!.backendRefs.map((ref) => ref.weight)).toEqual([50, 50]);
    },
  );

  it.skipIf(crds.missing)('names a missing route (no write)', async () => {
    const writer = new RouteWriter(clients);
    const edit = gatewayRouteEdit({ kind: 'HTTPRoute', name: 'nowhere', useHeaderRoutes: true }, NS, []);
    const failure = writer.write(edit, weights(20));
    await expect(failure).rejects.toBeInstanceOf(RouteTranslationError);
    await expect(failure).rejects.toThrow('HTTPRoute default/nowhere: metadata.name: not found');
  });

  it('derives the canary Ingress from the stable one it reads: nothing at rest, created with a canary, then left alone', async () => {
    await clients.custom.createNamespacedCustomObject({
      group: 'networking.k8s.io',
      version: 'v1',
      namespace: NS,
      plural: 'ingresses',
      body: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'shop', namespace: NS },
        spec: {
          rules: [
            {
              host: 'shop.example.com',
              http: {
                paths: [
                  {
                    path: '/',
                    pathType: 'Prefix',
                    backend: { service: { name: 'web-stable', port: { number: 80 } } },
                  },
                ],
              },
            },
          ],
        },
      },
    });
    // The canary Ingress is owned by its Rollout: one must exist, or the garbage collector takes it away.
    await run('kubectl', [
      '--kubeconfig',
      join(tmp.path, 'kubeconfig'),
      '--cache-dir',
      join(tmp.path, 'cache'),
      'apply',
      '-f',
      join(import.meta.dirname, '..', '..', '..', 'deploy', 'crds', 'rollouts.rollgate.dev.yaml'),
    ]);
    const rollout = toPlainObject<{ metadata: { uid: string } }>(
      await clients.custom.createNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'rollouts',
        body: ROLLOUT,
      }),
    );
    const writer = new RouteWriter(clients);
    const config = {
      stableIngresses: ['shop'],
      annotationPrefix: NGINX_DEFAULT_ANNOTATION_PREFIX,
      additionalIngressAnnotations: {},
      canaryIngressAnnotations: {},
    };
    const edit = canaryIngressEdit(config, 'shop', NS, { name: 'web', uid: rollout.metadata.uid });
    expect(await writer.write(edit, weights(0))).toBe('unchanged');
    const withCanary = { ...weights(20), canaryHash: 'def456' };
    expect(await writer.write(edit, withCanary)).toBe('created');
    // What the API server stored (defaults and all) translates to itself: no write at rest.
    expect(await writer.write(edit, withCanary)).toBe('unchanged');
    expect(await writer.write(edit, { ...weights(0), canaryHash: 'def456' })).toBe('updated');
    const writes = sandbox.audit
      .entries()
      .filter((entry) => entry.resource === 'ingresses' && entry.verb !== 'GET')
      .map((entry) => [entry.verb, entry.name ?? '', entry.code]);
    // The stable Ingress is written only by this test's own create (POST), never by the writer.
    expect(writes.filter(([verb]) => verb !== 'POST')).toEqual([['PUT', 'web-shop-canary', 200]]);
    expect(writes.filter(([verb]) => verb === 'POST')).toHaveLength(2);
  });

  it("edits a TraefikService in Traefik v2's traefik.containo.us when the cluster serves only that group", async () => {
    const edit = traefikServiceEdit({ weightedTraefikServiceName: 'web-wrr' }, NS);
    await expect(new RouteWriter(clients).write(edit, weights(20))).rejects.toThrow(
      'TraefikService default/web-wrr: the API traefik.io/v1alpha1 or traefik.containo.us/v1alpha1 is not served by the cluster (are its CRDs installed?)',
    );
    // A stand-in for Traefik v2's CRD (schema left open): only its group and names matter here.
    const crd = join(tmp.path, 'traefik-v2-crd.yaml');
    writeFileSync(
      crd,
      `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: traefikservices.traefik.containo.us
spec:
  group: traefik.containo.us
  scope: Namespaced
  names: {kind: TraefikService, plural: traefikservices, singular: traefikservice, listKind: TraefikServiceList}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
    );
    await run('kubectl', [
      '--kubeconfig',
      join(tmp.path, 'kubeconfig'),
      '--cache-dir',
      join(tmp.path, 'cache-v2'),
      'apply',
      '-f',
      crd,
    ]);
    const at = {
      group: 'traefik.containo.us',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'traefikservices',
    };
    await clients.custom.createNamespacedCustomObject({
      ...at,
      body: {
        apiVersion: 'traefik.containo.us/v1alpha1',
        kind: 'TraefikService',
        metadata: { name: 'web-wrr', namespace: NS },
        spec: {
          weighted: {
            services: [
              { name: 'web-stable', port: 80 },
              { name: 'web-canary', port: 80 },
            ],
          },
        },
      },
    });
    const writer = new RouteWriter(clients);
    expect(await writer.write(edit, weights(20))).toBe('updated');
    expect(await writer.write(edit, weights(20))).toBe('unchanged');
    const found = toPlainObject<{
      spec: { weighted: { services: Array<{ name: string; weight: number }> } };
    }>(await clients.custom.getNamespacedCustomObject({ ...at, name: 'web-wrr' }));
    expect(found.spec.weighted.services.map((entry) => [entry.name, entry.weight])).toEqual([
      ['web-stable', 80],
      ['web-canary', 20],
    ]);
  });

  it('says when the route API is not installed', async () => {
    const writer = new RouteWriter(clients);
    const edit = trafficSplitEdit({}, NS, { name: 'web', uid: 'uid-web' });
    const failure = writer.write(edit, weights(20));
    await expect(failure).rejects.toBeInstanceOf(RouteApiMissingError);
    await expect(failure).rejects.toThrow(
      'TrafficSplit default/web: the API split.smi-spec.io/v1alpha4|v1alpha3|v1alpha2|v1alpha1 is not served by the cluster (are its CRDs installed?)',
    );
  });
});
