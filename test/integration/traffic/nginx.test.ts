// End to end, NGINX: a whole Rollgate creates the canary Ingress beside the stable one and walks its canary-weight 20 → 50 → 100, to 0 on abort.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { isNotFound, kubeCall } from '../../../src/kube/errors.ts';
import { abortRollout, promoteRollout } from '../../../src/kube/rollout-commands.ts';
import {
  recordChanges,
  routedRolloutYaml,
  servicesYaml,
  startTrafficScene,
  type LiveRolloutStatus,
  type TrafficScene,
} from './traffic-scene.ts';

const NS = 'edge';
const key = { namespace: NS, name: 'web' };
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

const pausedAt = (step: number) => (s: LiveRolloutStatus) =>
  s.phase === 'Paused' && s.currentStepIndex === step && s.currentPodHash !== s.stableRS;

async function newImage(image: string, namespace = NS): Promise<void> {
  await scene.kubectl(
    'patch',
    'rollouts.rollgate.dev',
    'web',
    '-n',
    namespace,
    '--type=json',
    '-p',
    `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"${image}"}]`,
  );
}

let stableVersion: string;

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), []);
  await scene.kubectl('create', 'namespace', NS);
  await scene.apply('services.yaml', servicesYaml(NS));
  await scene.apply('ingress.yaml', ingressYaml(NS));
  stableVersion = (await ingress('web'))!.metadata.resourceVersion;
  await scene.apply(
    'rollout.yaml',
    routedRolloutYaml({ namespace: NS, image: 'web:1', trafficRouting: ROUTING }),
  );
  await scene.waitFor('the first revision healthy', NS, 'web', (s) => s.phase === 'Healthy');
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
    await newImage('web:2');
    await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    const created = await ingress(CANARY_INGRESS);
    expect(created?.metadata.annotations).toEqual({
      'nginx.ingress.kubernetes.io/canary': 'true',
      'nginx.ingress.kubernetes.io/canary-weight': '20',
      'nginx.ingress.kubernetes.io/canary-by-header': 'X-Canary',
    });
    expect(created?.metadata.ownerReferences).toMatchObject([
      { kind: 'Rollout', name: 'web', controller: true },
    ]);
    expect(created?.spec.ingressClassName).toBe('nginx');
    expect(created?.spec.rules.map((rule) => rule.host)).toEqual(['web.example.com']);
    expect(backends(created)).toEqual(['web-canary']);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 50', NS, 'web', pausedAt(3));
    expect(await canaryWeight()).toBe('50');
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 100', NS, 'web', pausedAt(5));
    expect(await canaryWeight()).toBe('100');
    await promoteRollout(scene.clients, key);
    const done = await scene.waitFor(
      'the new revision healthy',
      NS,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    expect(done.trafficRouterError).toBeUndefined();
    await expect.poll(() => canaryWeight(), { timeout: 10_000 }).toBe('0');
    // The stable Ingress is only ever read.
    const stable = await ingress('web');
    expect(stable?.metadata.resourceVersion).toBe(stableVersion);
    expect(backends(stable)).toEqual(['web-stable']);
  }, 60_000);

  it('abort at 20 % sets canary-weight 0 before the canary scales down', async () => {
    await newImage('web:3');
    const paused = await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    expect(await canaryWeight()).toBe('20');
    const canaryHash = paused.currentPodHash!;
    const ingresses = await recordChanges(scene, `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`);
    const sets = await recordChanges(scene, `/apis/apps/v1/namespaces/${NS}/replicasets`);
    await abortRollout(scene.clients, key);
    await scene.waitFor('the abort carried out', NS, 'web', (s) => s.phase === 'Degraded');
    await expect
      .poll(async () => (await scene.replicaSets(NS)).find((rs) => rs.hash === canaryHash)?.replicas, {
        timeout: 15_000,
      })
      .toBe(0);
    ingresses.stop();
    sets.stop();
    expect(await canaryWeight()).toBe('0');
    const routedBack = ingresses.seen.find(({ object }) => {
      const found = object as unknown as Ingress;
      return found.metadata.annotations?.[WEIGHT] === '0';
    });
    const scaledDown = sets.seen.find(({ object }) => {
      const rs = object as { metadata: { labels?: Record<string, string> }; spec: { replicas?: number } };
      return rs.metadata.labels?.['rollouts-pod-template-hash'] === canaryHash && (rs.spec.replicas ?? 0) < 1;
    });
    expect(routedBack).toBeDefined();
    expect(scaledDown).toBeDefined();
    expect(routedBack!.resourceVersion).toBeLessThan(scaledDown!.resourceVersion);
    expect((await ingress('web'))?.metadata.resourceVersion).toBe(stableVersion);
  }, 60_000);

  it('a missing stable Ingress holds the canary with a message and an Event naming it; the Ingress back, it goes on', async () => {
    const ns = 'edge-missing';
    await scene.kubectl('create', 'namespace', ns);
    await scene.apply('missing-services.yaml', servicesYaml(ns));
    await scene.apply('missing-ingress.yaml', ingressYaml(ns));
    await scene.apply(
      'missing-rollout.yaml',
      routedRolloutYaml({ namespace: ns, image: 'web:1', trafficRouting: ROUTING }),
    );
    await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
    await scene.kubectl('delete', 'ingress', 'web', '-n', ns);
    await newImage('web:2', ns);
    const message = `Ingress ${ns}/web: metadata.name: not found (the stableIngress of Rollout ${ns}/web)`;
    const held = await scene.waitFor(
      'the router error recorded',
      ns,
      'web',
      (s) => s.trafficRouterError !== undefined,
    );
    expect(held.trafficRouterError?.message).toBe(message);
    expect(held.currentStepIndex ?? 0).toBe(0);
    expect(held.phase).not.toBe('Paused');
    expect(await ingress(CANARY_INGRESS, ns)).toBeUndefined();
    const events = await scene.clients.core.listNamespacedEvent({ namespace: ns });
    expect(
      events.items.filter((e) => e.reason === 'TrafficRoutingError').map((e) => [e.type, e.message]),
    ).toEqual([['Warning', message]]);
    await scene.apply('missing-ingress.yaml', ingressYaml(ns));
    const paused = await scene.waitFor(
      'the pause after setWeight 20 once the Ingress is back',
      ns,
      'web',
      pausedAt(1),
    );
    expect(paused.trafficRouterError).toBeUndefined();
    expect(await canaryWeight(ns)).toBe('20');
  }, 60_000);
});
