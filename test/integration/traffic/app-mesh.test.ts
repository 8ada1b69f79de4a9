// End to end, App Mesh: a whole Rollgate pins the VirtualNodes to the revisions' pods and walks the VirtualRouter's
// weighted targets 20 → 50 → 100, back to stable on abort, puts a hand edit back at the next resync, holds a rollout
// whose mesh objects are missing, leaves the router on stable when the Rollout is deleted; Argo's appmesh example runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import { runCli } from '../../support/run-cli.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import {
  abortRoutesBackFirst,
  deletedRolloutLeavesStable,
  deployRoutedRollout,
  heldWhileRouteMissing,
  pausedAt,
  setImage,
  startTrafficScene,
  walkToNewStable,
  type RouteReadBack,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);
const examples = upstreamCorpus('argo-rollouts/examples', import.meta.filename);

const NS = 'mesh';
/** Short, so the drift test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;
const HASH = 'rollouts-pod-template-hash';

const virtualNodeYaml = (namespace: string, name: string) => `apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualNode
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  podSelector:
    matchLabels:
      app: web
      ${HASH}: tbd
  listeners:
    - portMapping: {port: 8080, protocol: http}
  serviceDiscovery:
    dns:
      hostname: ${name}.${namespace}.svc.cluster.local
`;

const virtualServiceYaml = (namespace: string) => `apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualService
metadata:
  name: web
  namespace: ${namespace}
spec:
  provider:
    virtualRouter:
      virtualRouterRef:
        name: web-router
`;

// As in Argo's example: the primary route over both nodes; a second route to another node is someone else's.
const virtualRouterYaml = (namespace: string) => `apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualRouter
metadata:
  name: web-router
  namespace: ${namespace}
spec:
  listeners:
    - portMapping: {port: 80, protocol: http}
  routes:
    - name: primary
      httpRoute:
        match: {prefix: /}
        action:
          weightedTargets:
            - virtualNodeRef: {name: web-canary}
              weight: 0
            - virtualNodeRef: {name: web-stable}
              weight: 100
    - name: admin
      httpRoute:
        match: {prefix: /admin}
        action:
          weightedTargets:
            - virtualNodeRef: {name: admin}
              weight: 1
`;

const meshYaml = (namespace: string) =>
  [
    virtualNodeYaml(namespace, 'web-stable'),
    virtualNodeYaml(namespace, 'web-canary'),
    virtualServiceYaml(namespace),
    virtualRouterYaml(namespace),
  ].join('---\n');

const ROUTING = `appMesh:
  virtualService:
    name: web
  virtualNodeGroup:
    canaryVirtualNodeRef: {name: web-canary}
    stableVirtualNodeRef: {name: web-stable}
`;

interface Target {
  virtualNodeRef: { name: string };
  weight: number;
}
interface Route {
  name: string;
  httpRoute: { action: { weightedTargets: Target[] } };
}

let scene: TrafficScene;

async function meshObject<T>(namespace: string, plural: string, name: string): Promise<T> {
  return toPlainObject<T>(
    await scene.clients.custom.getNamespacedCustomObject({
      group: 'appmesh.k8s.aws',
      version: 'v1beta2',
      namespace,
      plural,
      name,
    }),
  );
}

const routesOf = async (namespace: string, router = 'web-router') =>
  (await meshObject<{ spec: { routes: Route[] } }>(namespace, 'virtualrouters', router)).spec.routes;

/** The hash label each VirtualNode's podSelector holds, as read back. */
const pinnedHash = async (namespace: string, node: string) =>
  (
    await meshObject<{ spec: { podSelector: { matchLabels: Record<string, string> } } }>(
      namespace,
      'virtualnodes',
      node,
    )
  ).spec.podSelector.matchLabels[HASH];

/** [stable, canary] weights of the primary route, as read back from the VirtualRouter. */
const weightsIn = (
  namespace: string,
  names = { router: 'web-router', route: 'primary', stable: 'web-stable', canary: 'web-canary' },
): RouteReadBack<[number | undefined, number | undefined]> => ({
  async read() {
    const route = (await routesOf(namespace, names.router)).find((r) => r.name === names.route);
    const weightOf = (node: string) =>
      route?.httpRoute.action.weightedTargets.find((t) => t.virtualNodeRef.name === node)?.weight;
    return [weightOf(names.stable), weightOf(names.canary)];
  },
  at: (canary) => [100 - canary, canary],
});
const weights = weightsIn(NS);

beforeAll(async () => {
  scene = await startTrafficScene(
    inject('redisUrl'),
    [
      'appmesh.k8s.aws_virtualservices.yaml',
      'appmesh.k8s.aws_virtualrouters.yaml',
      'appmesh.k8s.aws_virtualnodes.yaml',
    ],
    { workers: { resyncMs: RESYNC_MS } },
  );
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: meshYaml(NS) });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('App Mesh VirtualRouter and VirtualNodes under a whole Rollgate', () => {
  it('pins the nodes, weights the primary route 100/0 at rest and walks it 20 → 50 → 100', async () => {
    const rest = await scene.status(NS, 'web');
    expect(await weights.read()).toEqual([100, 0]);
    expect(await pinnedHash(NS, 'web-stable')).toBe(rest?.stableRS);
    expect(await pinnedHash(NS, 'web-canary')).toBe('canary-hash');
    const { done } = await walkToNewStable(scene, NS, 'web:2', weights, async (_weight, paused) => {
      // At each pause each node selects its revision's pods.
      expect(await pinnedHash(NS, 'web-canary')).toBe(paused.currentPodHash);
      expect(await pinnedHash(NS, 'web-stable')).toBe(paused.stableRS);
    });
    expect(done.trafficRouterError).toBeUndefined();
    await expect.poll(() => pinnedHash(NS, 'web-stable'), { timeout: 10_000 }).toBe(done.stableRS);
    await expect.poll(() => pinnedHash(NS, 'web-canary'), { timeout: 10_000 }).toBe('canary-hash');
    const admin = (await routesOf(NS)).find((r) => r.name === 'admin');
    expect(admin?.httpRoute.action.weightedTargets).toEqual([
      { virtualNodeRef: { name: 'admin' }, weight: 1 },
    ]);
  }, 60_000);

  it('abort at 50 % sends 100 % to the stable node before the canary scales down', async () => {
    await abortRoutesBackFirst(scene, NS, {
      image: 'web:3',
      fromStep: 3,
      routes: weights,
      routesPath: `/apis/appmesh.k8s.aws/v1beta2/namespaces/${NS}/virtualrouters`,
      routedBack: (object) =>
        (object as { spec: { routes: Route[] } }).spec.routes[0]!.httpRoute.action.weightedTargets.find(
          (t) => t.virtualNodeRef.name === 'web-canary',
        )?.weight === 0,
      scaledDownBelow: 2,
    });
  }, 60_000);

  it('a hand edit of the weights is put back at the next resync, with an Event', async () => {
    const ns = 'mesh-drift';
    const drift = weightsIn(ns);
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: meshYaml(ns) });
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after setWeight 20', ns, 'web', pausedAt(1));
    expect(await drift.read()).toEqual([80, 20]);
    await scene.kubectl(
      'patch',
      'virtualrouters.appmesh.k8s.aws',
      'web-router',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/routes/0/httpRoute/action/weightedTargets/0/weight","value":100},' +
        '{"op":"replace","path":"/spec/routes/0/httpRoute/action/weightedTargets/1/weight","value":0}]',
    );
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
      .toEqual([
        `VirtualRouter ${ns}/web-router: weights edited outside Rollgate; set back to Rollgate's (canary 20)`,
      ]);
    expect((await scene.status(ns, 'web'))?.currentStepIndex).toBe(1);
    // `rollgate status` finds the router through the VirtualService and reads the same weights back.
    const shown = await runCli('status', 'web', '-n', ns, '--kubeconfig', join(scene.tmp.path, 'kubeconfig'));
    expect(shown.stdout).toContain(`VirtualRouter ${ns}/web-router route primary: canary 20% / stable 80%`);
    expect(shown.stdout).not.toContain('VirtualNode');
  }, 60_000);

  it('a deleted VirtualService holds the canary with a message naming it; once back, it goes on', async () => {
    const ns = 'mesh-broken';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: meshYaml(ns) });
    await heldWhileRouteMissing(scene, ns, {
      remove: async () =>
        void (await scene.kubectl('delete', 'virtualservices.appmesh.k8s.aws', 'web', '-n', ns)),
      restore: () => scene.apply('broken-mesh.yaml', virtualServiceYaml(ns)),
      message: `VirtualService ${ns}/web: metadata.name: not found`,
    });
    expect(await weightsIn(ns).read()).toEqual([80, 20]);
  }, 60_000);

  it('a missing VirtualRouter or VirtualNode is named in the status, not a crash', async () => {
    const ns = 'mesh-missing';
    await deployRoutedRollout(scene, { namespace: ns, trafficRouting: ROUTING, objects: meshYaml(ns) });
    await scene.kubectl('delete', 'virtualrouters.appmesh.k8s.aws', 'web-router', '-n', ns);
    await setImage(scene, ns, 'web:2');
    const held = await scene.waitFor(
      'the missing router named',
      ns,
      'web',
      (s) => s.trafficRouterError !== undefined && s.currentPodHash !== s.stableRS,
    );
    expect(held.trafficRouterError?.message).toBe(`VirtualRouter ${ns}/web-router: metadata.name: not found`);
    // The node goes before the router comes back: with both in place for a moment, a router retry due
    // just then (its backoff is the load's to time) would rightly write the canary's weight.
    await scene.kubectl('delete', 'virtualnodes.appmesh.k8s.aws', 'web-canary', '-n', ns);
    await scene.apply('mesh-missing-router.yaml', virtualRouterYaml(ns));
    await scene.waitFor(
      'the missing node named',
      ns,
      'web',
      (s) => s.trafficRouterError?.message === `VirtualNode ${ns}/web-canary: metadata.name: not found`,
    );
    expect(await weightsIn(ns).read()).toEqual([100, 0]);
  }, 60_000);

  it('deleting the Rollout leaves the VirtualRouter in place, all on the stable node', async () => {
    await deletedRolloutLeavesStable(scene, NS, weights);
  }, 60_000);
});

describe.skipIf(crds.missing || examples.missing)("Argo's examples/appmesh under a whole Rollgate", () => {
  const ns = 'argo-examples';
  const file = (name: string) => join(examples.folder, 'appmesh', name);
  const key = { namespace: ns, name: 'my-rollout' };

  it('runs: the nodes pinned, the route walked to 25 %, then promoted to the new stable', async () => {
    // The example's Mesh has no CRD in the corpus (the mesh itself is not written by a router): every other
    // object is applied as it is, the Rollout and its AnalysisTemplate as a sync applies them (Rollgate's kinds).
    const objects = readFileSync(file('canary-service.yaml'), 'utf8')
      .split(/^---$/m)
      .filter((doc) => !/^kind: Mesh$/m.test(doc));
    expect(objects).toHaveLength(10);
    await scene.apply('appmesh-example-objects.yaml', objects.join('---'));
    const rollout = readFileSync(file('canary-rollout.yaml'), 'utf8').replaceAll(
      'apiVersion: argoproj.io/v1alpha1',
      'apiVersion: rollgate.dev/v1alpha1',
    );
    await scene.apply('appmesh-example-rollout.yaml', rollout);
    const healthy = await scene.waitFor('the example healthy', ns, key.name, (s) => s.phase === 'Healthy');
    const example = weightsIn(ns, {
      router: 'my-vrouter',
      route: 'primary',
      stable: 'my-vn-stable',
      canary: 'my-vn-canary',
    });
    await expect.poll(() => example.read(), { timeout: 10_000 }).toEqual([100, 0]);
    expect(await pinnedHash(ns, 'my-vn-stable')).toBe(healthy.stableRS);
    expect(await pinnedHash(ns, 'my-vn-canary')).toBe('canary-hash');

    await scene.kubectl(
      'patch',
      'rollouts.rollgate.dev',
      key.name,
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"argoproj/rollouts-demo:yellow"}]',
    );
    const paused = await scene.waitFor(
      'the pause after setWeight 25',
      ns,
      key.name,
      (s) => s.phase === 'Paused' && s.currentStepIndex === 1,
    );
    expect(await example.read()).toEqual([75, 25]);
    expect(await pinnedHash(ns, 'my-vn-canary')).toBe(paused.currentPodHash);

    // Promoted fully (past its 10-minute pauses), the new revision is the stable one and all traffic goes there.
    await promoteRollout(scene.clients, key, { full: true });
    const done = await scene.waitFor(
      'the new revision healthy',
      ns,
      key.name,
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(() => example.read(), { timeout: 10_000 }).toEqual([100, 0]);
    await expect.poll(() => pinnedHash(ns, 'my-vn-stable'), { timeout: 10_000 }).toBe(done.stableRS);
  }, 90_000);
});
