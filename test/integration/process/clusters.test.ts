// One Rollgate serving three clusters (three sandboxes: the local one and two registered by kubeconfig), one
// source per cluster from one bare repository behind git http-backend: a push brings each cluster's Rollout
// to its canary pause; a cluster answering 500 to every request leaves the others' canaries alone, its
// source says why it waits, and it recovers by itself; a source naming a cluster not registered yet syncs
// once the cluster is added, with no restart.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import {
  imageOf,
  startClustersScene,
  type ClusterRollout,
  type ClustersScene,
} from '../../support/clusters-scene.ts';
import type { SceneRollgate } from '../../support/system-scene.ts';

let scene: ClustersScene;
let rollgate: SceneRollgate;

/** Waits until the cluster's Rollout runs `image` and `test` holds of it. */
async function waitFor(cluster: string, image: string, what: string, test: (r: ClusterRollout) => boolean) {
  return eventually(
    `${cluster}'s Rollout at ${image} ${what}`,
    async () => {
      const r = await scene.rolloutIn(cluster);
      return r !== undefined && imageOf(r) === image && test(r) ? r : undefined;
    },
    { timeoutMs: 40_000, intervalMs: 100 },
  );
}
const healthy = (r: ClusterRollout) => r.status?.phase === 'Healthy';
const paused = (r: ClusterRollout) => r.status?.phase === 'Paused' && r.status.currentStepIndex === 1;

const sourceStatus = (source: string) => scene.sourceStatus(source);
const push = (image: string) => scene.push(image);

beforeAll(async () => {
  scene = await startClustersScene({
    name: 'clusters',
    redisUrl: inject('redisUrl'),
    clusters: [{ name: 'eu-west' }, { name: 'us-east' }],
  });
  await push('web:1.0');
  rollgate = await scene.startRollgate({
    config: {
      sources: [
        scene.source('local'),
        scene.source('eu', 'eu-west'),
        scene.source('us', 'us-east'),
        // Not registered yet: the last test registers it.
        scene.source('late', 'ap-south'),
      ],
    },
    start: { dependencyCheckIntervalMs: 200 },
  });
  for (const cluster of ['in-cluster', 'eu-west', 'us-east'])
    await waitFor(cluster, 'web:1.0', 'Healthy', healthy);
}, 120_000);

afterAll(async () => {
  await scene?.stop();
});

describe('one Rollgate, three clusters', () => {
  it('brings each cluster’s Rollout to its canary pause after one push, each reconciled in its own cluster', async () => {
    await push('web:2.0');
    for (const cluster of ['in-cluster', 'eu-west', 'us-east'])
      await waitFor(cluster, 'web:2.0', 'paused at its canary step', paused);
    // Each cluster's rollout is its own series, and each cluster's requests are counted apart.
    const text = await rollgate.metrics.registry.metrics();
    for (const cluster of ['in-cluster', 'eu-west', 'us-east']) {
      expect(text).toContain(`rollout_info{namespace="default",name="web",strategy="canary"`);
      expect(text).toMatch(new RegExp(`rollout_info\\{[^}]*phase="Paused",cluster="${cluster}"\\} 1`));
      expect(text).toMatch(new RegExp(`rollgate_kube_requests_total\\{[^}]*cluster="${cluster}"\\}`));
    }
  });

  it('keeps the other clusters going while one answers 500, says why on its source, and recovers by itself', async () => {
    scene.sandbox('us-east')!.faults.errorRate = 1;
    await eventually(
      'us-east to fail its readiness check (information only: the process stays ready)',
      async () => {
        const ready = await fetch(`${rollgate.running.http.url}/readyz`);
        const body = (await ready.json()) as { checks: Record<string, string> };
        return ready.status === 200 && body.checks['cluster/us-east'] === 'degraded' ? body : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await push('web:3.0');
    for (const cluster of ['in-cluster', 'eu-west'])
      await waitFor(cluster, 'web:3.0', 'paused at its canary step', paused);
    const waiting = await eventually('source us to say its cluster is unreachable', async () => {
      const status = await sourceStatus('us');
      return status.message?.includes('cluster "us-east" is unreachable') ? status : undefined;
    });
    expect(waiting.phase).toBe('Failed');
    // The others' sources are synced, untouched by us-east.
    expect((await sourceStatus('eu')).phase).toBe('Synced');
    scene.sandbox('us-east')!.faults.errorRate = 0;
    await waitFor('us-east', 'web:3.0', 'paused at its canary step', paused);
    await eventually('source us synced again', async () => (await sourceStatus('us')).phase === 'Synced');
  });

  it('says a source’s cluster is not registered, and syncs it once the cluster is added (no restart)', async () => {
    const waiting = await eventually('source late to name its unknown cluster', async () => {
      const status = await sourceStatus('late');
      return status.message?.includes('cluster "ap-south" is not registered') ? status : undefined;
    });
    expect(waiting.phase).toBe('Failed');
    await scene.addCluster('ap-south');
    // Its first revision: straight to Healthy (no stable one to canary from), reconciled by its own reconciler.
    await waitFor('ap-south', 'web:3.0', 'Healthy', healthy);
    expect((await fetch(`${rollgate.running.http.url}/readyz`)).status).toBe(200);
  });
});
