// Issue 35's first check: three sandboxes and the real kube-apiserver as four clusters, each registered by an Argo CD
// cluster Secret (the real one by bearer token and CA over verified TLS), one source per cluster from one repository
// behind git http-backend, and a Fleet whose second wave is the real server. A commit walks the waves in order; an
// image the real cluster's registry lacks aborts its canary there, which stops the fleet (its status names the cluster
// and the step) before the last wave ever receives it; a fixed commit walks the fleet again, to every cluster.
//
// The real server is the wave that fails because that is the path a sandbox could hide the most of: the hold before
// its wave opens, a canary of real ReplicaSets (the controller manager's) and pods (the kubelet stand-in's pull
// failure), the abort judged from that, and the stop read back through a Secret-registered TLS connection.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { imageOf, startClustersScene, type ClustersScene } from '../support/clusters-scene.ts';
import { eventually } from '../support/eventually.ts';
import {
  applyFleet,
  fleetRolloutYaml,
  healthyOn,
  readFleet,
  walkWaves,
  type Snapshot,
} from '../support/fleet-walk.ts';
import { connectRealCluster, createTestNamespace, UNPULLABLE_REGISTRY } from './support/real-cluster.ts';

const real = connectRealCluster();
const REAL = 'eu-west-1';
const CLUSTERS = ['staging', REAL, 'us-east-1', 'ap-south-1'] as const;
const WAVES = [['staging'], [REAL], ['us-east-1', 'ap-south-1']];
const SOURCES: Record<string, string> = {
  staging: 'staging',
  [REAL]: 'eu',
  'us-east-1': 'us',
  'ap-south-1': 'ap',
};
/** A path no other file's Rollouts carry: the fleet finds its Rollout in a cluster by this annotation. */
const ROLLOUT_PATH = 'apps/web-fleet/rollout.yaml';
const BROKEN = `${UNPULLABLE_REGISTRY}/web:3.0`;
let namespace: { name: string; remove(): Promise<void> };
let scene: ClustersScene;
const revisions: Record<string, string> = {};

/**
 * Two canary steps without pauses, so a healthy canary finishes by itself and a stuck one stops at a step the
 * fleet can name; it aborts after 10 s without progress (a real server under load needs more than the sandbox's 2).
 */
function rolloutYaml(image: string): string {
  return fleetRolloutYaml(image, { progressDeadlineSeconds: 10, weights: [50, 100] });
}

const fleet = () => readFleet(scene, 'web');
const everywhere = (image: string) => (s: Snapshot) => CLUSTERS.every((c) => healthyOn(s, c, image));

async function fleetAt(phase: string, revision: string, timeoutMs = 60_000) {
  return eventually(
    `the Fleet ${phase} on ${revision.slice(0, 7)}`,
    async () => {
      const f = await fleet();
      return f.status?.phase === phase && f.status.revision === revision ? f : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  ).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}; the Fleet: ${JSON.stringify((await fleet()).status)}`);
  });
}

beforeAll(async () => {
  namespace = await createTestNamespace(real, 'fleet');
  scene = await startClustersScene({
    name: 'fleet-four-clusters',
    redisUrl: inject('redisUrl'),
    registration: 'argocd-secret',
    clusters: [
      { name: 'staging' },
      { name: REAL, given: { kubeConfig: real.kubeConfig, namespace: namespace.name } },
      { name: 'us-east-1' },
      { name: 'ap-south-1' },
    ],
    rolloutYaml,
    rolloutPath: ROLLOUT_PATH,
  }).catch(async (err: unknown) => {
    await namespace.remove();
    throw err;
  });
  revisions['web:1.0'] = await scene.push('web:1.0');
  await scene.startRollgate({
    config: { sources: CLUSTERS.map((cluster) => scene.source(SOURCES[cluster]!, cluster)) },
    start: { dependencyCheckIntervalMs: 200, fleetResyncMs: 300 },
  });
}, 120_000);

afterAll(async () => {
  try {
    await scene?.stop();
  } finally {
    await namespace?.remove();
  }
});

describe('a Fleet over three sandboxes and the real API server, all registered by Argo CD cluster Secrets', () => {
  it('registers the four clusters from their Secrets and deploys the first revision to each', async () => {
    const ready = await eventually(
      'the four Secret-registered clusters ok in /readyz',
      async () => {
        const answer = await fetch(`${scene.scene.rollgate.running.http.url}/readyz`);
        const body = (await answer.json()) as { checks: Record<string, string> };
        return CLUSTERS.every((c) => body.checks[`cluster/${c}`] === 'ok') ? body.checks : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(
      Object.keys(ready)
        .filter((check) => check.startsWith('cluster/'))
        .sort(),
    ).toEqual(['cluster/in-cluster', ...CLUSTERS.map((c) => `cluster/${c}`)].sort());
    for (const cluster of CLUSTERS)
      expect(scene.scene.rollgate.runtime.clusters.get(cluster)?.origin).toBe('argocd-secret');
    await walkWaves(scene, WAVES, 'web:1.0', everywhere('web:1.0'), 'web:1.0 Healthy everywhere', 90_000);
    await applyFleet(
      scene,
      `apiVersion: rollgate.dev/v1alpha1
kind: Fleet
metadata: { name: web, namespace: ${scene.stateNamespace} }
spec:
  rollout: { path: ${ROLLOUT_PATH}, name: web }
  clusters: [${CLUSTERS.join(', ')}]
  waves:
    - { name: canary, clusters: [staging] }
    - { name: first-region, clusters: [${REAL}] }
    - { name: rest, rest: true }
`,
    );
    const healthy = await fleetAt('Healthy', revisions['web:1.0']!);
    expect(healthy.status?.clusters?.map((c) => [c.name, c.wave])).toEqual(
      expect.arrayContaining([
        ['staging', 0],
        [REAL, 1],
        ['us-east-1', 2],
        ['ap-south-1', 2],
      ]),
    );
  }, 180_000);

  it('walks web:2.0 through the waves in order: the real cluster after staging, the rest after it', async () => {
    const revision = await scene.push('web:2.0');
    revisions['web:2.0'] = revision;
    const { violations } = await walkWaves(
      scene,
      WAVES,
      'web:2.0',
      everywhere('web:2.0'),
      'web:2.0 Healthy everywhere',
      120_000,
    );
    expect(violations).toEqual([]);
    await fleetAt('Healthy', revision);
  }, 180_000);

  it('stops at the real cluster when the image will not pull there: the last wave never receives it', async () => {
    const revision = await scene.push(BROKEN);
    const rest = ['us-east-1', 'ap-south-1'];
    const ranBroken = new Set<string>();
    const stopped = await eventually(
      `the Fleet stopped by ${REAL}`,
      async () => {
        for (const cluster of rest)
          if (imageOf(await scene.rolloutIn(cluster)) === BROKEN) ranBroken.add(cluster);
        const f = await fleet();
        return f.status?.phase === 'Stopped' ? f : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}; the Fleet: ${JSON.stringify((await fleet()).status)}`);
    });
    expect([...ranBroken]).toEqual([]);
    // Which cluster, which revision, which step, and why: in the status a user reads.
    expect(stopped.status?.stoppedBy).toMatchObject({ cluster: REAL, revision, step: '1/2' });
    // Why: the progress deadline passed because the real cluster's own pods could not pull the image (the kubelet
    // stand-in's registry lacks it), as the Rollout's abort message says.
    const reason = stopped.status?.stoppedBy?.reason ?? '';
    expect(reason).toMatch(/^RolloutAborted: ProgressDeadlineExceeded: ReplicaSet "web-\w+" has timed out/);
    expect(reason).toMatch(
      /container app: (ErrImagePull|ImagePullBackOff): .*unpullable\.registry\.test\/web:3\.0/,
    );
    expect(stopped.status?.message).toContain(`aborted in ${REAL} at step 1/2: ${reason}`);
    const staging = await scene.rolloutIn('staging');
    expect([imageOf(staging), staging?.status?.phase]).toEqual([BROKEN, 'Healthy']);
    const eu = await scene.rolloutIn(REAL);
    expect(imageOf(eu)).toBe(BROKEN);
    expect(eu?.status?.abort).toBe(true);
    // The last wave's sources synced the commit but hold the Rollout at web:2.0, saying so.
    for (const cluster of rest) {
      const held = await eventually(`source ${SOURCES[cluster]} to say the fleet holds web`, async () => {
        const status = await scene.sourceStatus(SOURCES[cluster]!);
        return status.message?.includes(`held by fleet ${scene.stateNamespace}/web until wave rest`)
          ? status
          : undefined;
      });
      expect(held.message).toContain(`applied at ${revisions['web:2.0']!.slice(0, 7)}`);
      const live = await scene.rolloutIn(cluster);
      expect([imageOf(live), live?.status?.phase]).toEqual(['web:2.0', 'Healthy']);
    }
  }, 180_000);

  it('walks a fixed commit (web:3.1) from wave 0 to every cluster, the real one included', async () => {
    const revision = await scene.push('web:3.1');
    const { violations } = await walkWaves(
      scene,
      WAVES,
      'web:3.1',
      everywhere('web:3.1'),
      'web:3.1 Healthy everywhere',
      120_000,
    );
    expect(violations).toEqual([]);
    const healthy = await fleetAt('Healthy', revision);
    expect(healthy.status?.stoppedBy).toBeUndefined();
  }, 180_000);
});
