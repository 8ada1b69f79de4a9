// Benchmark: git push + webhook → canary ReplicaSet created, through the whole pipeline (sandbox cluster),
// with where the time goes (poll and sync job timestamps), how many Git requests each push costs, and the
// same with the Git server in another process (as a remote one would be).
import { performance } from 'node:perf_hooks';
import type { Job, Queue } from 'bullmq';
import type { GitServer } from '../src/git/smart-http-server.ts';
import { rolloutYaml, startPipeline } from '../test/integration/pipeline/pipeline-harness.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';
import { median, percentile } from './stats.ts';

const PUSHES = 20;

/** The newest finished job of `queue` created at or after `since` (epoch ms). */
async function jobSince(queue: Queue, since: number): Promise<Job | undefined> {
  const jobs = await queue.getJobs(['completed'], 0, 20);
  return jobs.filter((j) => j.timestamp >= since).sort((a, b) => b.timestamp - a.timestamp)[0];
}

interface PipelineRun {
  latencies: number[];
  stages: { toPoll: number[]; poll: number[]; toSync: number[]; sync: number[] };
  gitRequests: number[];
}

/** PUSHES pushes, each measured from its webhook to the canary ReplicaSet of its image. */
async function measure(
  redisUrl: string,
  gitServer?: (root: string) => Promise<GitServer>,
): Promise<PipelineRun> {
  const pipeline = await startPipeline(redisUrl, gitServer ? { gitServer } : {});
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
    const result: PipelineRun = {
      latencies: [],
      stages: { toPoll: [], poll: [], toSync: [], sync: [] },
      gitRequests: [],
    };
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
      result.latencies.push(performance.now() - started);
      result.gitRequests.push(pipeline.git.requestCount());
      const poll = await jobSince(queues.poll.queue, sentAt - 1);
      const sync = await jobSince(queues.sync.queue, sentAt - 1);
      if (poll?.processedOn && poll.finishedOn && sync?.processedOn && sync.finishedOn) {
        result.stages.toPoll.push(poll.processedOn - sentAt);
        result.stages.poll.push(poll.finishedOn - poll.processedOn);
        result.stages.toSync.push(sync.processedOn - poll.finishedOn);
        result.stages.sync.push(sync.finishedOn - sync.processedOn);
      }
    }
    return result;
  } finally {
    await pipeline.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  try {
    const local = await measure(redis.url);
    const remote = await measure(redis.url, (root) =>
      serveGitRepositoriesInChild(root, { receivePack: true }),
    );
    const stage = (name: string, values: number[], notes?: string): BenchResult => ({
      name,
      value: median(values),
      unit: 'ms',
      notes: notes ?? `median of ${values.length}; BullMQ job timestamps (1 ms resolution)`,
    });
    return [
      {
        name: 'webhook → canary ReplicaSet created, p50',
        value: percentile(local.latencies, 50),
        unit: 'ms',
        goal: '≤ 250 ms',
        notes: `${PUSHES} pushes, each superseding the last`,
      },
      {
        name: 'webhook → canary ReplicaSet created, p95',
        value: percentile(local.latencies, 95),
        unit: 'ms',
      },
      stage('of which webhook → poll job started', local.stages.toPoll),
      stage('of which poll job (ref check)', local.stages.poll),
      stage('of which poll finished → sync job started', local.stages.toSync),
      stage(
        'of which sync job (fetch, diff, apply, state)',
        local.stages.sync,
        'median; the reconcile job starts when the Rollout is applied, before the sync job ends',
      ),
      {
        name: 'Git requests per push (poll + sync)',
        value: median(local.gitRequests),
        unit: 'requests',
        notes: 'at the Git server; each runs git http-backend (one process per request)',
      },
      {
        name: 'same, Git server in another process: p50',
        value: percentile(remote.latencies, 50),
        unit: 'ms',
        notes: 'as a remote Git server: its per-request process spawns no longer block the measured process',
      },
      {
        name: 'same, Git server in another process: p95',
        value: percentile(remote.latencies, 95),
        unit: 'ms',
      },
      stage('same, Git server in another process: sync job', remote.stages.sync),
    ];
  } finally {
    await redis.stop();
  }
}
