// Benchmark: git push + webhook → canary ReplicaSet created, through the whole pipeline (sandbox cluster),
// with where the time goes (poll and sync job timestamps) and how many Git requests each push costs.
import { performance } from 'node:perf_hooks';
import type { Job, Queue } from 'bullmq';
import { rolloutYaml, startPipeline } from '../test/integration/pipeline/pipeline-harness.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';

const PUSHES = 20;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** The newest finished job of `queue` created at or after `since` (epoch ms). */
async function jobSince(queue: Queue, since: number): Promise<Job | undefined> {
  const jobs = await queue.getJobs(['completed'], 0, 20);
  return jobs.filter((j) => j.timestamp >= since).sort((a, b) => b.timestamp - a.timestamp)[0];
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  const pipeline = await startPipeline(redis.url);
  try {
    pipeline.work.write({ 'web.yaml': rolloutYaml({ image: 'web:0' }) });
    pipeline.work.commit('first');
    await pipeline.work.push(pipeline.repoUrl);
    const running = await pipeline.start();
    const queues = running.poller!.queues;
    const waitFor = async (image: string): Promise<void> => {
      for (;;) {
        const sets = await pipeline.replicaSets();
        if (sets.some((rs) => rs.image === image)) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await waitFor('web:0');
    const latencies: number[] = [];
    const stages = {
      toPoll: [] as number[],
      poll: [] as number[],
      toSync: [] as number[],
      sync: [] as number[],
    };
    const gitRequests: number[] = [];
    for (let i = 1; i <= PUSHES; i++) {
      const image = `web:${i}`;
      pipeline.work.write({ 'web.yaml': rolloutYaml({ image }) });
      pipeline.work.commit(`image ${i}`);
      await pipeline.work.push(pipeline.repoUrl);
      pipeline.git.resetRequestCount();
      // Measured from the webhook (the Git server's notification), as a user's push would trigger it.
      const sentAt = Date.now();
      const started = performance.now();
      await pipeline.pushWebhook(running);
      await waitFor(image);
      latencies.push(performance.now() - started);
      gitRequests.push(pipeline.git.requestCount());
      const poll = await jobSince(queues.poll.queue, sentAt - 1);
      const sync = await jobSince(queues.sync.queue, sentAt - 1);
      if (poll?.processedOn && poll.finishedOn && sync?.processedOn && sync.finishedOn) {
        stages.toPoll.push(poll.processedOn - sentAt);
        stages.poll.push(poll.finishedOn - poll.processedOn);
        stages.toSync.push(sync.processedOn - poll.finishedOn);
        stages.sync.push(sync.finishedOn - sync.processedOn);
      }
    }
    latencies.sort((a, b) => a - b);
    const stage = (name: string, values: number[], notes?: string): BenchResult => ({
      name,
      value: median(values),
      unit: 'ms',
      notes: notes ?? `median of ${values.length}; BullMQ job timestamps (1 ms resolution)`,
    });
    return [
      {
        name: 'webhook → canary ReplicaSet created, p50',
        value: percentile(latencies, 50),
        unit: 'ms',
        goal: '≤ 250 ms',
        notes: `${PUSHES} pushes, each superseding the last`,
      },
      { name: 'webhook → canary ReplicaSet created, p95', value: percentile(latencies, 95), unit: 'ms' },
      stage('of which webhook → poll job started', stages.toPoll),
      stage('of which poll job (ref check)', stages.poll),
      stage('of which poll finished → sync job started', stages.toSync),
      stage(
        'of which sync job (fetch, diff, apply, state)',
        stages.sync,
        'median; the reconcile job starts when the Rollout is applied, before the sync job ends',
      ),
      {
        name: 'Git requests per push (poll + sync)',
        value: median(gitRequests),
        unit: 'requests',
        notes: 'at the Git server; each runs git http-backend (one process per request)',
      },
    ];
  } finally {
    await pipeline.stop();
    await redis.stop();
  }
}
