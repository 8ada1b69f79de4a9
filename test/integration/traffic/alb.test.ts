// End to end, ALB: a whole Rollgate walks the AWS Load Balancer Controller's forward action annotation 20 → 50 → 100
// on the user's Ingress, back to stable on abort, puts a hand edit back at the next resync, holds a rollout whose
// Ingress is missing, leaves the route on stable when the Rollout goes, and swaps ping and pong Services.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import {
  abortRoutesBackFirst,
  deployRoutedRollout,
  heldWhileRouteMissing,
  pausedAt,
  routedRolloutYaml,
  servicesYaml,
  setImage,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

const NS = 'aws';
/** Short, so the drift test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;
const ACTION = 'alb.ingress.kubernetes.io/actions.web-stable';

// As Argo's docs have users write it: the path to the action's Service on port `use-annotation`, no action yet.
const ingressYaml = (namespace: string, service = 'web-stable') => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ${namespace}
  annotations:
    kubernetes.io/ingress.class: alb
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: ${service}
                port:
                  name: use-annotation
`;

const ROUTING = `alb:
  ingress: web
  servicePort: 80
`;

interface IngressObject {
  metadata: { annotations?: Record<string, string> };
  spec: unknown;
}

let scene: TrafficScene;

async function ingress(namespace = NS): Promise<IngressObject> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'networking.k8s.io',
    version: 'v1',
    namespace,
    plural: 'ingresses',
    name: 'web',
  });
  return toPlainObject<IngressObject>(found);
}

/** The Weight of each target group of the action `key`, by Service name, as the controller would read it. */
function targetWeights(object: IngressObject, key = ACTION): Record<string, number> | undefined {
  const value = object.metadata.annotations?.[key];
  if (value === undefined) return undefined;
  const action = JSON.parse(value) as {
    ForwardConfig: { TargetGroups: Array<{ ServiceName: string; ServicePort: string; Weight: number }> };
  };
  return Object.fromEntries(action.ForwardConfig.TargetGroups.map((g) => [g.ServiceName, g.Weight]));
}

/** [stable, canary] weights, as read back from the Ingress's action annotation. */
const weightsIn = (namespace: string): RouteReadBack<[number | undefined, number | undefined]> => ({
  async read() {
    const groups = targetWeights(await ingress(namespace));
    return [groups?.['web-stable'], groups?.['web-canary']];
  },
  at: (canary) => [100 - canary, canary],
});
const weights = weightsIn(NS);

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), [], { workers: { resyncMs: RESYNC_MS } });
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: ingressYaml(NS) });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('ALB Ingress action annotation under a whole Rollgate', () => {
  it('weights the two target groups 100/0 at rest and walks them 20 → 50 → 100, then back to the new stable', async () => {
    expect(await weights.read()).toEqual([100, 0]);
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights);
    expect(done.trafficRouterError).toBeUndefined();
    const live = await ingress();
    // Argo's JSON as the controller reads it; everything else of the Ingress as the user wrote it.
    const { 'kubectl.kubernetes.io/last-applied-configuration': _applied, ...annotations } =
      live.metadata.annotations ?? {};
    expect(annotations).toEqual({
      'kubernetes.io/ingress.class': 'alb',
      'alb.ingress.kubernetes.io/scheme': 'internet-facing',
      [ACTION]:
        '{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"web-canary","ServicePort":"80","Weight":0},{"ServiceName":"web-stable","ServicePort":"80","Weight":100}]}}',
    });
  }, 60_000);

  it('abort at 50 % sends 100 % to stable before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`,
      routedBack: (object) => targetWeights(object as unknown as IngressObject)?.['web-canary'] === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a hand edit of the annotation is put back at the next resync, with an Event', async () => {
    const ns = 'aws-drift';
    const drift = weightsIn(ns);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: ingressYaml(ns) });
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after setWeight 20', ns, 'web', pausedAt(1));
    expect(await drift.read()).toEqual([80, 20]);
    const edited =
      '{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"web-canary","ServicePort":"80","Weight":100},{"ServiceName":"web-stable","ServicePort":"80","Weight":0}]}}';
    await scene.kubectl('annotate', 'ingress', 'web', '-n', ns, '--overwrite', `${ACTION}=${edited}`);
    // Not read back here: the resync (every RESYNC_MS) may already have put it back by then. The
    // TrafficDriftCorrected Event below says the edit landed and was corrected.
    // Nothing watched changed (routes are not watched): only the periodic resync can bring the fix.
    await expect.poll(() => drift.read(), { timeout: RESYNC_MS + 10_000 }).toEqual([80, 20]);
    await expect
      .poll(
        async () =>
          (await scene.clients.core.listNamespacedEvent({ namespace: ns })).items
            .filter((e) => e.reason === 'TrafficDriftCorrected')
            .map((e) => e.message),
        { timeout: 10_000 },
      )
      .toEqual([`Ingress ${ns}/web: weights edited outside Rollgate; set back to Rollgate's (canary 20)`]);
    expect((await scene.status(ns, 'web'))?.currentStepIndex).toBe(1);
  }, 60_000);

  it('a deleted Ingress holds the canary with a message naming it; once back, it goes on', async () => {
    const ns = 'aws-broken';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: ingressYaml(ns) });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () => void (await scene.kubectl('delete', 'ingress', 'web', '-n', ns)),
      restore: () => scene.apply('broken-ingress.yaml', ingressYaml(ns)),
      message: `Ingress ${ns}/web: metadata.name: not found (an ingress of Rollout ${ns}/web)`,
    });
    expect(await weightsIn(ns).read()).toEqual([80, 20]);
  }, 60_000);

  it('deleting a Healthy Rollout leaves the Ingress routing 100 % to the stable Service', async () => {
    const ns = 'aws-gone';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: ingressYaml(ns) });
    const jobs = await scene.reconcileJobs();
    await scene.kubectl('delete', 'rollouts.rollgate.dev', 'web', '-n', ns);
    // Let Rollgate see the deletion (a pass for the key finds the Rollout gone) before looking.
    await expect.poll(() => scene.reconcileJobs(), { timeout: 10_000 }).toBeGreaterThan(jobs);
    const live = await ingress(ns);
    expect(targetWeights(live)).toEqual({ 'web-canary': 0, 'web-stable': 100 });
    expect(live.spec).toEqual((await ingress(NS)).spec);
  }, 60_000);
});

describe('ALB header routes', () => {
  it('a setHeaderRoute step adds its action, conditions and first path; completion removes them', async () => {
    const ns = 'aws-header';
    const rollout = (image: string) =>
      routedRolloutYaml({
        namespace: ns,
        image,
        trafficRouting: `managedRoutes:\n  - name: by-header\n${ROUTING}`,
      }).replace(
        '        - setWeight: 20\n',
        '        - setWeight: 20\n        - setHeaderRoute:\n            name: by-header\n            match:\n              - headerName: X-Canary\n                headerValue: {exact: "yes"}\n',
      );
    await scene.createNamespace(ns);
    await scene.apply(`${ns}-services.yaml`, servicesYaml(ns));
    await scene.apply(`${ns}-ingress.yaml`, ingressYaml(ns));
    await scene.apply(`${ns}-rollout.yaml`, rollout('web:1'));
    await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
    const pristine = (await ingress(ns)).spec;
    await scene.apply(`${ns}-rollout.yaml`, rollout('web:2'));
    // Steps: setWeight 20 (0), the header route (1), the pause (2): a header route waits for a canary pod.
    await scene.waitFor('the pause after the header route', ns, 'web', pausedAt(2));
    const live = await ingress(ns);
    expect(targetWeights(live, 'alb.ingress.kubernetes.io/actions.by-header')).toEqual({ 'web-canary': 100 });
    expect(JSON.parse(live.metadata.annotations!['alb.ingress.kubernetes.io/conditions.by-header']!)).toEqual(
      [{ field: 'http-header', httpHeaderConfig: { httpHeaderName: 'X-Canary', values: ['yes'] } }],
    );
    const paths = (
      live.spec as { rules: Array<{ http: { paths: Array<{ backend: { service: { name: string } } }> } }> }
    ).rules[0]!.http.paths;
    expect(paths.map((p) => p.backend.service.name)).toEqual(['by-header', 'web-stable']);
    expect(targetWeights(live)).toEqual({ 'web-canary': 20, 'web-stable': 80 });
    await promoteRollout(scene.clients, { namespace: ns, name: 'web' }, { full: true });
    await scene.waitFor(
      'the new revision healthy',
      ns,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(async () => (await ingress(ns)).spec, { timeout: 10_000 }).toEqual(pristine);
    const after = (await ingress(ns)).metadata.annotations!;
    expect(after['alb.ingress.kubernetes.io/actions.by-header']).toBeUndefined();
    expect(after['alb.ingress.kubernetes.io/conditions.by-header']).toBeUndefined();
    expect(targetWeights(await ingress(ns))).toEqual({ 'web-canary': 0, 'web-stable': 100 });
  }, 60_000);
});

describe('ALB with pingPong: the ping and pong Services take turns', () => {
  const ns = 'aws-pingpong';
  const ACTION_ROOT = 'alb.ingress.kubernetes.io/actions.web-root';
  const pingPongRollout = (image: string) =>
    routedRolloutYaml({
      namespace: ns,
      image,
      services: false,
      trafficRouting: `alb:\n  ingress: web\n  servicePort: 80\n  rootService: web-root\n`,
    }).replace(
      '      trafficRouting:\n',
      '      pingPong:\n        pingService: web-ping\n        pongService: web-pong\n      trafficRouting:\n',
    );
  const servicesYaml = ['web-ping', 'web-pong', 'web-root']
    .map(
      (name) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 8080
`,
    )
    .join('---\n');
  const groups = async () => targetWeights(await ingress(ns), ACTION_ROOT);
  const selectorHash = async (name: string) =>
    (await scene.clients.core.readNamespacedService({ name, namespace: ns })).spec?.selector?.[
      'rollouts-pod-template-hash'
    ];

  it('walks 20 → 50 → 100 with the pong Service as the canary, then pong is the stable; the next update walks ping', async () => {
    await scene.createNamespace(ns);
    await scene.apply(`${ns}-services.yaml`, servicesYaml);
    await scene.apply(`${ns}-ingress.yaml`, ingressYaml(ns, 'web-root'));
    await scene.apply(`${ns}-rollout.yaml`, pingPongRollout('web:1'));
    const first = await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
    // The first revision makes ping the stable (as Argo), weighted 100 in the root Service's action.
    await expect.poll(groups, { timeout: 10_000 }).toEqual({ 'web-pong': 0, 'web-ping': 100 });
    expect((first as { canary?: { stablePingPong?: string } }).canary?.stablePingPong).toBe('ping');
    const v1 = first.stableRS!;

    const walk = async (image: string, canary: string, stable: string) => {
      await scene.apply(`${ns}-rollout.yaml`, pingPongRollout(image));
      for (const [step, weight] of [
        [1, 20],
        [3, 50],
        [5, 100],
      ] as const) {
        const paused = await scene.waitFor(`the pause after setWeight ${weight}`, ns, 'web', pausedAt(step));
        expect(await groups()).toEqual({ [canary]: weight, [stable]: 100 - weight });
        expect(await selectorHash(canary)).toBe(paused.currentPodHash);
        await promoteRollout(scene.clients, { namespace: ns, name: 'web' });
      }
      const done = await scene.waitFor(
        'the new revision healthy',
        ns,
        'web',
        (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
      );
      // Swapped: the Service that carried the canary is the stable now, with all traffic; no selector moved.
      await expect.poll(groups, { timeout: 10_000 }).toEqual({ [stable]: 0, [canary]: 100 });
      expect(await selectorHash(canary)).toBe(done.stableRS);
      return done;
    };

    const second = await walk('web:2', 'web-pong', 'web-ping');
    expect((second as { canary?: { stablePingPong?: string } }).canary?.stablePingPong).toBe('pong');
    expect(await selectorHash('web-ping')).toBe(v1);
    const third = await walk('web:3', 'web-ping', 'web-pong');
    expect((third as { canary?: { stablePingPong?: string } }).canary?.stablePingPong).toBe('ping');
    expect(await selectorHash('web-pong')).toBe(second.stableRS);
  }, 90_000);
});
