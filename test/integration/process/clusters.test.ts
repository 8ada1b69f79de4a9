// One Rollgate serving three clusters (three sandboxes: the local one and two registered by kubeconfig), one
// source per cluster from one bare repository behind git http-backend: a push brings each cluster's Rollout
// to its canary pause; a cluster answering 500 to every request leaves the others' canaries alone, its
// source says why it waits, and it recovers by itself; a source naming a cluster not registered yet syncs
// once the cluster is added, with no restart.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { STATUS_KEY, sourceStateName } from '../../../src/sync/source-state-object.ts';
import { eventually } from '../../support/eventually.ts';
import { kubeconfigClusterSet, type MutableClusterSet } from '../../support/kubeconfig-cluster-set.ts';
import { startSystemScene, type SceneRollgate, type SystemScene } from '../../support/system-scene.ts';
import { rolloutYaml } from '../pipeline/pipeline-harness.ts';

const STATE_NS = 'rollgate-system';
let scene: SystemScene;
let rollgate: SceneRollgate;
let clusters: MutableClusterSet;
const remote: Record<string, Sandbox> = {};
/** Each cluster's admin clients, by the name Rollgate knows it by. */
const admin: Record<string, KubeClients> = {};

interface LiveRollout {
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { phase?: string; currentStepIndex?: number };
}

async function rolloutIn(cluster: string): Promise<LiveRollout | undefined> {
  try {
    return toPlainObject<LiveRollout>(
      await admin[cluster]!.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        name: 'web',
      }),
    );
  } catch {
    return undefined;
  }
}

const imageOf = (r: LiveRollout | undefined) => r?.spec?.template?.spec?.containers?.[0]?.image;

/** Waits until the cluster's Rollout runs `image` and `test` holds of it. */
async function waitFor(cluster: string, image: string, what: string, test: (r: LiveRollout) => boolean) {
  return eventually(
    `${cluster}'s Rollout at ${image} ${what}`,
    async () => {
      const r = await rolloutIn(cluster);
      return r !== undefined && imageOf(r) === image && test(r) ? r : undefined;
    },
    { timeoutMs: 40_000, intervalMs: 100 },
  );
}
const healthy = (r: LiveRollout) => r.status?.phase === 'Healthy';
const paused = (r: LiveRollout) => r.status?.phase === 'Paused' && r.status.currentStepIndex === 1;

/** The source's status as the state ConfigMap holds it (what its commit status and conditions are made of). */
async function sourceStatus(source: string): Promise<{ phase?: string; message?: string; commit?: string }> {
  try {
    const state = await scene.clients.core.readNamespacedConfigMap({
      name: sourceStateName(source),
      namespace: STATE_NS,
    });
    const status = state.data?.[STATUS_KEY];
    return status ? (JSON.parse(status) as { phase?: string; message?: string }) : {};
  } catch {
    return {};
  }
}

let work: ReturnType<SystemScene['workingCopy']>;
async function push(image: string): Promise<void> {
  work.write({ 'deploy/web.yaml': rolloutYaml({ image }) });
  work.commit(`web ${image}`);
  await work.push(scene.repoUrl('apps'));
}

beforeAll(async () => {
  for (const name of ['eu-west', 'us-east']) remote[name] = await startSandbox({ readyDelayMs: 100 });
  scene = await startSystemScene({
    name: 'clusters',
    redisUrl: inject('redisUrl'),
    repositories: ['apps'],
    config: { kubernetes: { stateNamespace: STATE_NS } },
  });
  scene.defer(() => Promise.all(Object.values(remote).map((s) => s.stop())));
  admin['in-cluster'] = scene.clients;
  for (const [name, sandbox] of Object.entries(remote)) admin[name] = createKubeClients(sandbox.kubeConfig);
  await scene.kubectl(['create', 'namespace', STATE_NS]);
  work = scene.workingCopy('apps');
  await push('web:1.0');
  const source = (name: string, cluster?: string) => ({
    name,
    url: scene.repoUrl('apps'),
    path: 'deploy',
    interval: '1s',
    render: 'plain',
    ...(cluster !== undefined ? { cluster } : {}),
  });
  rollgate = await scene.startRollgate({
    clusters: (local) => {
      clusters = kubeconfigClusterSet(
        local,
        Object.entries(remote).map(([name, sandbox]) => ({ name, kubeConfig: sandbox.kubeConfig })),
      );
      return clusters;
    },
    config: {
      sources: [
        source('local'),
        source('eu', 'eu-west'),
        source('us', 'us-east'),
        // Not registered yet: the last test registers it.
        source('late', 'ap-south'),
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
    remote['us-east']!.faults.errorRate = 1;
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
    remote['us-east']!.faults.errorRate = 0;
    await waitFor('us-east', 'web:3.0', 'paused at its canary step', paused);
    await eventually('source us synced again', async () => (await sourceStatus('us')).phase === 'Synced');
  });

  it('says a source’s cluster is not registered, and syncs it once the cluster is added (no restart)', async () => {
    const waiting = await eventually('source late to name its unknown cluster', async () => {
      const status = await sourceStatus('late');
      return status.message?.includes('cluster "ap-south" is not registered') ? status : undefined;
    });
    expect(waiting.phase).toBe('Failed');
    const sandbox = await startSandbox({ readyDelayMs: 100 });
    scene.defer(() => sandbox.stop());
    admin['ap-south'] = createKubeClients(sandbox.kubeConfig);
    clusters.add('ap-south', sandbox.kubeConfig);
    // Its first revision: straight to Healthy (no stable one to canary from), reconciled by its own reconciler.
    await waitFor('ap-south', 'web:3.0', 'Healthy', healthy);
    expect((await fetch(`${rollgate.running.http.url}/readyz`)).status).toBe(200);
  });
});
