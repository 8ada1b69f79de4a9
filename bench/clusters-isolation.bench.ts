// One Rollgate, three sandbox clusters (the local one and two registered), one source each from one bare
// repository behind git http-backend: the p50 time from a push to each healthy cluster's Rollout at its
// canary pause, first with every cluster healthy, then (same run) with one cluster answering 500 to every
// request. Isolation holds when the second figure is within 20 % of the first.
import { createKubeClients, toPlainObject, type KubeClients } from '../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../src/sandbox/index.ts';
import { eventually } from '../test/support/eventually.ts';
import { kubeconfigClusterSet } from '../test/support/kubeconfig-cluster-set.ts';
import { startSystemScene } from '../test/support/system-scene.ts';
import { rolloutYaml } from '../test/integration/pipeline/pipeline-harness.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const ROUNDS = 5;

interface LiveRollout {
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { phase?: string; currentStepIndex?: number };
}

async function pausedAt(clients: KubeClients, image: string): Promise<boolean> {
  try {
    const r = toPlainObject<LiveRollout>(
      await clients.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        name: 'web',
      }),
    );
    return (
      r.spec?.template?.spec?.containers?.[0]?.image === image &&
      r.status?.phase === 'Paused' &&
      r.status.currentStepIndex === 1
    );
  } catch {
    return false;
  }
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  const remote: Record<string, Sandbox> = {};
  for (const name of ['eu-west', 'us-east']) remote[name] = await startSandbox({ readyDelayMs: 100 });
  const scene = await startSystemScene({
    name: 'clusters-bench',
    redisUrl: redis.url,
    repositories: ['apps'],
    config: { kubernetes: { stateNamespace: 'rollgate-system' } },
  });
  try {
    const admin: Record<string, KubeClients> = { 'in-cluster': scene.clients };
    for (const [name, sandbox] of Object.entries(remote)) admin[name] = createKubeClients(sandbox.kubeConfig);
    await scene.kubectl(['create', 'namespace', 'rollgate-system']);
    const work = scene.workingCopy('apps');
    let version = 0;
    const push = async (): Promise<string> => {
      const image = `web:${++version}.0`;
      work.write({ 'deploy/web.yaml': rolloutYaml({ image }) });
      work.commit(image);
      await work.push(scene.repoUrl('apps'));
      return image;
    };
    await push();
    const source = (name: string, cluster: string) => ({
      name,
      url: scene.repoUrl('apps'),
      path: 'deploy',
      interval: '1s',
      render: 'plain',
      cluster,
    });
    await scene.startRollgate({
      clusters: (local) =>
        kubeconfigClusterSet(
          local,
          Object.entries(remote).map(([name, sandbox]) => ({ name, kubeConfig: sandbox.kubeConfig })),
        ),
      config: {
        sources: [source('local', 'in-cluster'), source('eu', 'eu-west'), source('us', 'us-east')],
      },
      start: { dependencyCheckIntervalMs: 500 },
    });
    // Each round: one push, the time until each watched cluster's canary pauses on it.
    const rounds = async (watched: string[]): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const image = await push();
        const pushedAt = performance.now();
        await Promise.all(
          watched.map(async (cluster) => {
            await eventually(`${cluster} at ${image}`, () => pausedAt(admin[cluster]!, image), {
              timeoutMs: 60_000,
              intervalMs: 50,
            });
            times.push(performance.now() - pushedAt);
          }),
        );
      }
      return times;
    };
    // The first revision goes straight to Healthy, the next to its first pause: warm-up.
    await rounds(['in-cluster', 'eu-west', 'us-east']);
    const healthy = ['in-cluster', 'eu-west'];
    const allHealthy = await rounds(healthy);
    remote['us-east']!.faults.errorRate = 1;
    const oneFailing = await rounds(healthy);
    const base = median(allHealthy);
    const failing = median(oneFailing);
    return [
      {
        name: 'push → canary pause, p50 of 2 healthy clusters, all 3 healthy',
        value: base,
        unit: 'ms',
        notes: `${ROUNDS} pushes, source interval 1 s`,
      },
      {
        name: 'push → canary pause, p50 of the same 2, the third answering 500',
        value: failing,
        unit: 'ms',
        goal: '≤ 120 % of all healthy',
        notes: `${((failing / base) * 100).toFixed(0)} % of all healthy (same run)`,
      },
    ];
  } finally {
    await scene.stop();
    for (const sandbox of Object.values(remote)) await sandbox.stop();
    await redis.stop();
  }
}
