// End to end, SMI: a whole Rollgate creates the rollout's TrafficSplit and walks it 20 → 50 → 100, back to stable on abort.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { abortRollout, promoteRollout } from '../../../src/kube/rollout-commands.ts';
import {
  recordChanges,
  routedRolloutYaml,
  servicesYaml,
  startTrafficScene,
  type LiveRolloutStatus,
  type TrafficScene,
} from './traffic-scene.ts';

const NS = 'mesh';
const key = { namespace: NS, name: 'web' };
const ROUTING = `smi:
  rootService: web
  trafficSplitName: web-split
`;

interface Split {
  apiVersion: string;
  metadata: { ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }> };
  spec: { service: string; backends: Array<{ service: string; weight: number }> };
}

let scene: TrafficScene;

async function split(): Promise<Split> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'split.smi-spec.io',
    version: 'v1alpha4',
    namespace: NS,
    plural: 'trafficsplits',
    name: 'web-split',
  });
  return toPlainObject<Split>(found);
}

/** [stable, canary] backend weights, as read back from the TrafficSplit. */
async function weights(): Promise<[number | undefined, number | undefined]> {
  const { backends } = (await split()).spec;
  const of = (service: string) => backends.find((b) => b.service === service)?.weight;
  return [of('web-stable'), of('web-canary')];
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
  scene = await startTrafficScene(inject('redisUrl'), ['split.smi-spec.io_trafficsplits.yaml']);
  await scene.kubectl('create', 'namespace', NS);
  await scene.apply('services.yaml', servicesYaml(NS));
  await scene.apply(
    'rollout.yaml',
    routedRolloutYaml({ namespace: NS, image: 'web:1', trafficRouting: ROUTING }),
  );
  await scene.waitFor('the first revision healthy', NS, 'web', (s) => s.phase === 'Healthy');
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('SMI TrafficSplit under a whole Rollgate', () => {
  it('creates the split owned by the rollout, in the version the cluster serves', async () => {
    const created = await split();
    expect(created.apiVersion).toBe('split.smi-spec.io/v1alpha4');
    expect(created.metadata.ownerReferences).toMatchObject([
      { kind: 'Rollout', name: 'web', controller: true },
    ]);
    expect(created.spec.service).toBe('web');
    expect(await weights()).toEqual([100, 0]);
  });

  it('walks the split 20 → 50 → 100 at each pause, then back to the new stable', async () => {
    await newImage('web:2');
    await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    expect(await weights()).toEqual([80, 20]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 50', NS, 'web', pausedAt(3));
    expect(await weights()).toEqual([50, 50]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor('the pause after setWeight 100', NS, 'web', pausedAt(5));
    expect(await weights()).toEqual([0, 100]);
    await promoteRollout(scene.clients, key);
    await scene.waitFor(
      'the new revision healthy',
      NS,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(weights, { timeout: 10_000 }).toEqual([100, 0]);
  }, 60_000);

  it('abort at 20 % sends 100 % to stable before the canary scales down', async () => {
    await newImage('web:3');
    const paused = await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    expect(await weights()).toEqual([80, 20]);
    const canaryHash = paused.currentPodHash!;
    const splits = await recordChanges(
      scene,
      `/apis/split.smi-spec.io/v1alpha4/namespaces/${NS}/trafficsplits`,
    );
    const sets = await recordChanges(scene, `/apis/apps/v1/namespaces/${NS}/replicasets`);
    await abortRollout(scene.clients, key);
    await scene.waitFor('the abort carried out', NS, 'web', (s) => s.phase === 'Degraded');
    await expect
      .poll(async () => (await scene.replicaSets(NS)).find((rs) => rs.hash === canaryHash)?.replicas, {
        timeout: 15_000,
      })
      .toBe(0);
    splits.stop();
    sets.stop();
    expect(await weights()).toEqual([100, 0]);
    const routedBack = splits.seen.find(
      ({ object }) =>
        (object as unknown as Split).spec.backends.find((b) => b.service === 'web-canary')?.weight === 0,
    );
    const scaledDown = sets.seen.find(({ object }) => {
      const rs = object as { metadata: { labels?: Record<string, string> }; spec: { replicas?: number } };
      return rs.metadata.labels?.['rollouts-pod-template-hash'] === canaryHash && (rs.spec.replicas ?? 0) < 1;
    });
    expect(routedBack).toBeDefined();
    expect(scaledDown).toBeDefined();
    expect(routedBack!.resourceVersion).toBeLessThan(scaledDown!.resourceVersion);
  }, 60_000);
});
