// One Rollgate, three sandbox clusters (the local one and two registered), one source each from one bare
// repository behind git http-backend: the p50 time from a push to each healthy cluster's Rollout at its
// canary pause, first with every cluster healthy, then (same run) with one cluster answering 500 to every
// request. Isolation holds when the second figure is within 20 % of the first.
import { startClustersScene, type ClustersScene } from '../test/support/clusters-scene.ts';
import { eventually } from '../test/support/eventually.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const ROUNDS = 5;

/** The cluster's Rollout runs `image` and is in `phase` (Paused: at its canary pause, step 1). */
async function pausedAt(
  scene: ClustersScene,
  cluster: string,
  image: string,
  phase = 'Paused',
): Promise<boolean> {
  const r = await scene.rolloutIn(cluster);
  return (
    r?.spec?.template?.spec?.containers?.[0]?.image === image &&
    r.status?.phase === phase &&
    (phase !== 'Paused' || r.status.currentStepIndex === 1)
  );
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  const scene = await startClustersScene({
    name: 'clusters-bench',
    redisUrl: redis.url,
    clusters: [{ name: 'eu-west' }, { name: 'us-east' }],
  });
  try {
    let version = 0;
    const push = async (): Promise<string> => {
      const image = `web:${++version}.0`;
      await scene.push(image);
      return image;
    };
    const first = await push();
    await scene.startRollgate({
      config: {
        sources: [scene.source('local'), scene.source('eu', 'eu-west'), scene.source('us', 'us-east')],
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
            await eventually(`${cluster} at ${image}`, () => pausedAt(scene, cluster, image), {
              timeoutMs: 60_000,
              intervalMs: 50,
            });
            times.push(performance.now() - pushedAt);
          }),
        );
      }
      return times;
    };
    // The first revision goes straight to Healthy (nothing to canary from); then a warm-up round.
    for (const cluster of scene.names)
      await eventually(`${cluster} Healthy at ${first}`, () => pausedAt(scene, cluster, first, 'Healthy'), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
    await rounds(['in-cluster', 'eu-west', 'us-east']);
    const healthy = ['in-cluster', 'eu-west'];
    const allHealthy = await rounds(healthy);
    scene.sandbox('us-east')!.faults.errorRate = 1;
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
    await redis.stop();
  }
}
