// Benchmark: git push + webhook → canary ReplicaSet created, through the whole pipeline (sandbox cluster).
import { performance } from 'node:perf_hooks';
import { rolloutYaml, startPipeline } from '../test/integration/pipeline/pipeline-harness.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';

const PUSHES = 20;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  const pipeline = await startPipeline(redis.url);
  try {
    pipeline.work.write({ 'web.yaml': rolloutYaml({ image: 'web:0' }) });
    pipeline.work.commit('first');
    await pipeline.work.push(pipeline.repoUrl);
    const running = await pipeline.start();
    const waitFor = async (image: string): Promise<void> => {
      for (;;) {
        const sets = await pipeline.replicaSets();
        if (sets.some((rs) => rs.image === image)) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await waitFor('web:0');
    const latencies: number[] = [];
    for (let i = 1; i <= PUSHES; i++) {
      const image = `web:${i}`;
      pipeline.work.write({ 'web.yaml': rolloutYaml({ image }) });
      pipeline.work.commit(`image ${i}`);
      await pipeline.work.push(pipeline.repoUrl);
      // Measured from the webhook (the Git server's notification), as a user's push would trigger it.
      const started = performance.now();
      await pipeline.pushWebhook(running);
      await waitFor(image);
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    return [
      {
        name: 'webhook → canary ReplicaSet created, p50',
        value: percentile(latencies, 50),
        unit: 'ms',
        goal: '≤ 250 ms',
        notes: `${PUSHES} pushes, each superseding the last`,
      },
      { name: 'webhook → canary ReplicaSet created, p95', value: percentile(latencies, 95), unit: 'ms' },
    ];
  } finally {
    await pipeline.stop();
    await redis.stop();
  }
}
