// End to end, NGINX: a whole Rollgate creates the canary Ingress beside the stable one and walks its canary-weight 20 → 50 → 100, to 0 on abort.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { isNotFound, kubeCall } from '../../../src/kube/errors.ts';
import {
  abortRoutesBackFirst,
  deployRoutedRollout,
  heldWhileRouteMissing,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

const NS = 'edge';
const ROUTING = `nginx:
  stableIngress: web
  additionalIngressAnnotations:
    canary-by-header: X-Canary
`;
const CANARY_INGRESS = 'web-web-canary';
const WEIGHT = 'nginx.ingress.kubernetes.io/canary-weight';

const ingressYaml = (namespace: string) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ${namespace}
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
spec:
  ingressClassName: nginx
  rules:
    - host: web.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web-stable
                port:
                  number: 80
`;

interface Ingress {
  metadata: {
    resourceVersion: string;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }>;
  };
  spec: {
    ingressClassName?: string;
    rules: Array<{
      host?: string;
      http: { paths: Array<{ path: string; backend: { service: { name: string } } }> };
    }>;
  };
}

let scene: TrafficScene;

/** The Ingress as the API serves it, or undefined when it does not exist. */
async function ingress(name: string, namespace = NS): Promise<Ingress | undefined> {
  try {
    const found = await kubeCall({ verb: 'get', kind: 'Ingress', namespace, name }, () =>
      scene.clients.custom.getNamespacedCustomObject({
        group: 'networking.k8s.io',
        version: 'v1',
        namespace,
        plural: 'ingresses',
        name,
      }),
    );
    return toPlainObject<Ingress>(found);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The canary Ingress's canary-weight, as read back (undefined: no canary Ingress). */
async function canaryWeight(namespace = NS): Promise<string | undefined> {
  return (await ingress(CANARY_INGRESS, namespace))?.metadata.annotations?.[WEIGHT];
}

const backends = (found: Ingress | undefined) =>
  found?.spec.rules.flatMap((rule) => rule.http.paths.map((path) => path.backend.service.name));

/** The canary Ingress's annotations: what the NGINX controller routes by. */
const canaryAnnotations: RouteReadBack<Record<string, string> | undefined> = {
  read: async () => (await ingress(CANARY_INGRESS))?.metadata.annotations,
  at: (weight) => ({
    'nginx.ingress.kubernetes.io/canary': 'true',
    'nginx.ingress.kubernetes.io/canary-weight': String(weight),
    'nginx.ingress.kubernetes.io/canary-by-header': 'X-Canary',
  }),
};

let stableVersion: string;

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), []);
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: ingressYaml(NS) });
  stableVersion = (await ingress('web'))!.metadata.resourceVersion;
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('NGINX canary Ingress under a whole Rollgate', () => {
  it('creates no canary Ingress for a rollout at rest, and `kubectl get ingress` lists the stable one', async () => {
    const status = await scene.status(NS, 'web');
    expect(status?.trafficRouterError).toBeUndefined();
    expect(await ingress(CANARY_INGRESS)).toBeUndefined();
    const listed = await scene.kubectl('get', 'ingress', '-n', NS, '-o', 'name');
    expect(listed.trim()).toBe('ingress.networking.k8s.io/web');
  });

  it('walks canary-weight 20 → 50 → 100 at each pause, then keeps the canary Ingress at 0 (as Argo)', async () => {
    const { done } = await walkToNewStable(scene, NS, 'web:2', canaryAnnotations, async (weight) => {
      if (weight !== 20) return;
      const created = await ingress(CANARY_INGRESS);
      expect(created?.metadata.ownerReferences).toMatchObject([
        { kind: 'Rollout', name: 'web', controller: true },
      ]);
      expect(created?.spec.ingressClassName).toBe('nginx');
      expect(created?.spec.rules.map((rule) => rule.host)).toEqual(['web.example.com']);
      expect(backends(created)).toEqual(['web-canary']);
    });
    expect(done.trafficRouterError).toBeUndefined();
    // The stable Ingress is only ever read.
    const stable = await ingress('web');
    expect(stable?.metadata.resourceVersion).toBe(stableVersion);
    expect(backends(stable)).toEqual(['web-stable']);
  }, 60_000);

  it('abort at 20 % sets canary-weight 0 before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 1,
      routes: canaryAnnotations,
      routesPath: `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`,
      routedBack: (object) => (object as unknown as Ingress).metadata.annotations?.[WEIGHT] === '0',
      scaledDownBelow: 1,
    });
    expect((await ingress('web'))?.metadata.resourceVersion).toBe(stableVersion);
  }, 60_000);

  it('a missing stable Ingress holds the canary with a message and an Event naming it; the Ingress back, it goes on', async () => {
    const ns = 'edge-missing';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: ingressYaml(ns) });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () => void (await scene.kubectl('delete', 'ingress', 'web', '-n', ns)),
      restore: () => scene.apply('missing-ingress.yaml', ingressYaml(ns)),
      message: `Ingress ${ns}/web: metadata.name: not found (the stableIngress of Rollout ${ns}/web)`,
      whileHeld: async () => expect(await ingress(CANARY_INGRESS, ns)).toBeUndefined(),
    });
    expect(await canaryWeight(ns)).toBe('20');
  }, 60_000);
});
