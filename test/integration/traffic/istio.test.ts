// End to end, Istio with DestinationRule subsets and no canary/stable Services (F1's routing): weights walk 20 → 50 → 100,
// the subsets follow the pod hashes, and an abort sends 100 % to stable before the canary scales down.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { abortRollout, promoteRollout } from '../../../src/kube/rollout-commands.ts';
import {
  recordChanges,
  routedRolloutYaml,
  startTrafficScene,
  type LiveRolloutStatus,
  type TrafficScene,
} from './traffic-scene.ts';

const NS = 'mesh';
const key = { namespace: NS, name: 'web' };
const ROUTING = `istio:
  virtualService:
    name: web
  destinationRule:
    name: web
    canarySubsetName: canary
    stableSubsetName: stable
`;
const ISTIO_OBJECTS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: web
  namespace: ${NS}
spec:
  hosts: [web]
  http:
    - route:
        - destination: {host: web, subset: stable}
          weight: 100
        - destination: {host: web, subset: canary}
          weight: 0
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: web
  namespace: ${NS}
spec:
  host: web
  subsets:
    - name: stable
      labels: {app: web}
    - name: canary
      labels: {app: web}
`;

interface Destination {
  destination: { subset?: string };
  weight?: number;
}
let scene: TrafficScene;

async function get(plural: string): Promise<Record<string, unknown>> {
  return toPlainObject<Record<string, unknown>>(
    await scene.clients.custom.getNamespacedCustomObject({
      group: 'networking.istio.io',
      version: 'v1',
      namespace: NS,
      plural,
      name: 'web',
    }),
  );
}

/** [stable, canary] subset weights of the VirtualService's route. */
async function weights(): Promise<[number | undefined, number | undefined]> {
  const route = ((await get('virtualservices'))['spec'] as { http: Array<{ route: Destination[] }> }).http[0]!
    .route;
  const of = (subset: string) => route.find((d) => d.destination.subset === subset)?.weight;
  return [of('stable'), of('canary')];
}

/** The pod hash each subset selects: [stable, canary]. */
async function subsetHashes(): Promise<[string | undefined, string | undefined]> {
  const subsets = (
    (await get('destinationrules'))['spec'] as {
      subsets: Array<{ name: string; labels?: Record<string, string> }>;
    }
  ).subsets;
  const of = (name: string) => subsets.find((s) => s.name === name)?.labels?.['rollouts-pod-template-hash'];
  return [of('stable'), of('canary')];
}

const pausedAt = (step: number) => (s: LiveRolloutStatus) =>
  s.phase === 'Paused' && s.currentStepIndex === step && s.currentPodHash !== s.stableRS;

async function newImage(image: string): Promise<void> {
  await scene.kubectl(
    'patch',
    'rollouts.rollgate.dev',
    'web',
    '-n',
    NS,
    '--type=json',
    '-p',
    `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"${image}"}]`,
  );
}

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), [
    'networking.istio.io_virtualservices.yaml',
    'networking.istio.io_destinationrules.yaml',
  ]);
  await scene.kubectl('create', 'namespace', NS);
  await scene.apply('istio.yaml', ISTIO_OBJECTS);
  await scene.apply(
    'rollout.yaml',
    routedRolloutYaml({ namespace: NS, image: 'web:1', trafficRouting: ROUTING, services: false }),
  );
  await scene.waitFor('the first revision healthy', NS, 'web', (s) => s.phase === 'Healthy');
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('Istio VirtualService + DestinationRule subsets under a whole Rollgate', () => {
  it('walks the subset weights 20 → 50 → 100 with the subsets pinned to the hashes, then back to the new stable', async () => {
    const first = await scene.status(NS, 'web');
    await expect.poll(subsetHashes).toEqual([first?.stableRS, undefined]);
    expect(await weights()).toEqual([100, 0]);
    await newImage('web:2');
    const at20 = await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    expect(await weights()).toEqual([80, 20]);
    expect(await subsetHashes()).toEqual([at20.stableRS, at20.currentPodHash]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 50', NS, 'web', pausedAt(3));
    expect(await weights()).toEqual([50, 50]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 100', NS, 'web', pausedAt(5));
    expect(await weights()).toEqual([0, 100]);
    await promoteRollout(scene.clients, key);
    const done = await scene.waitFor(
      'the new revision healthy',
      NS,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(weights, { timeout: 10_000 }).toEqual([100, 0]);
    await expect.poll(subsetHashes).toEqual([done.stableRS, undefined]);
    expect(done.stableRS).toBe(at20.currentPodHash);
  }, 60_000);

  it('abort at 50 % sends 100 % to the stable subset before the canary scales down', async () => {
    await newImage('web:3');
    const paused = await scene.waitFor('the pause after setWeight 50', NS, 'web', (s) => {
      if (s.phase === 'Paused' && s.currentStepIndex === 1) void promoteRollout(scene.clients, key);
      return pausedAt(3)(s);
    });
    expect(await weights()).toEqual([50, 50]);
    const canaryHash = paused.currentPodHash!;
    const services = await recordChanges(
      scene,
      `/apis/networking.istio.io/v1/namespaces/${NS}/virtualservices`,
    );
    const sets = await recordChanges(scene, `/apis/apps/v1/namespaces/${NS}/replicasets`);
    await abortRollout(scene.clients, key);
    await scene.waitFor('the abort carried out', NS, 'web', (s) => s.phase === 'Degraded');
    await expect
      .poll(async () => (await scene.replicaSets(NS)).find((rs) => rs.hash === canaryHash)?.replicas, {
        timeout: 15_000,
      })
      .toBe(0);
    services.stop();
    sets.stop();
    expect(await weights()).toEqual([100, 0]);
    const routedBack = services.seen.find(({ object }) => {
      const route = (object as { spec: { http: Array<{ route: Destination[] }> } }).spec.http[0]!.route;
      return route.find((d) => d.destination.subset === 'canary')?.weight === 0;
    });
    const scaledDown = sets.seen.find(({ object }) => {
      const rs = object as { metadata: { labels?: Record<string, string> }; spec: { replicas?: number } };
      return rs.metadata.labels?.['rollouts-pod-template-hash'] === canaryHash && (rs.spec.replicas ?? 0) < 2;
    });
    expect(routedBack).toBeDefined();
    expect(scaledDown).toBeDefined();
    expect(routedBack!.resourceVersion).toBeLessThan(scaledDown!.resourceVersion);
  }, 60_000);
});
