// Benchmark: git push + webhook → canary ReplicaSet created, through the whole pipeline (sandbox cluster),
// with where the time goes (poll and sync job timestamps), how many Git requests each push costs, and the
// same with the Git server in another process (as a remote one would be). Each push is measured beside its
// floor in the same run (issue 37): native `git fetch` of the new commit, `kubectl apply --server-side` of
// the changed Rollout and the ReplicaSet's create, the two taking turns going first.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { Job, Queue } from 'bullmq';
import type { GitServer } from '../src/git/smart-http-server.ts';
import { rolloutYaml, startPipeline } from '../test/integration/pipeline/pipeline-harness.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';
import { median, percentile } from './stats.ts';
import { gitEnv } from '../test/support/git-fixtures.ts';

const PUSHES = Number(process.env.ROLLGATE_BENCH_PIPELINE_PUSHES ?? 20);
const KUBECTL = process.env.KUBECTL ?? 'kubectl';
/** Issue 37: webhook → canary ReplicaSet within 1.5× its floor, medians of the same run. */
const FLOOR_GOAL = 1.5;
const run$ = promisify(execFile);

/** The newest finished job of `queue` created at or after `since` (epoch ms). */
async function jobSince(queue: Queue, since: number): Promise<Job | undefined> {
  const jobs = await queue.getJobs(['completed'], 0, 20);
  return jobs.filter((j) => j.timestamp >= since).sort((a, b) => b.timestamp - a.timestamp)[0];
}

interface PipelineRun {
  latencies: number[];
  /** The floor of each push, in the same order: fetch + apply + ReplicaSet create. */
  floors: number[];
  stages: { toPoll: number[]; poll: number[]; toSync: number[]; sync: number[] };
  gitRequests: number[];
}

/** PUSHES pushes, each measured from its webhook to the canary ReplicaSet of its image. */
async function measure(
  redisUrl: string,
  gitServer?: (root: string) => Promise<GitServer>,
): Promise<PipelineRun> {
  const pipeline = await startPipeline(redisUrl, gitServer ? { gitServer } : {});
  const floorDir = mkdtempSync(join(tmpdir(), 'rollgate-bench-floor-'));
  try {
    pipeline.work.write({ 'web.yaml': rolloutYaml({ image: 'web:0' }) });
    pipeline.work.commit('first');
    await pipeline.work.push(pipeline.repoUrl);
    const floor = await floorOf(pipeline, floorDir);
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
      floors: [],
      stages: { toPoll: [], poll: [], toSync: [], sync: [] },
      gitRequests: [],
    };
    for (let i = 1; i <= PUSHES; i++) {
      const image = `web:${i}`;
      pipeline.work.write({ 'web.yaml': rolloutYaml({ image }) });
      pipeline.work.commit(`image ${i}`);
      await pipeline.work.push(pipeline.repoUrl);
      // The floor first on odd pushes, after on even ones: a busy machine slows both alike.
      if (i % 2 === 1) result.floors.push(await floor(i, image));
      pipeline.git.resetRequestCount();
      // Measured from the webhook (the Git server's notification), as a user's push would trigger it.
      const sentAt = Date.now();
      const started = performance.now();
      await pipeline.pushWebhook(running);
      await waitFor(image);
      result.latencies.push(performance.now() - started);
      result.gitRequests.push(pipeline.git.requestCount());
      if (i % 2 === 0) result.floors.push(await floor(i, image));
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
    rmSync(floorDir, { recursive: true, force: true });
  }
}

/**
 * What a push's way to its canary cannot go below, done by native tools: `git fetch` of the new commit
 * into a repository that holds the previous one, `kubectl apply --server-side` of the changed Rollout
 * (`--dry-run=server`: the API server does the whole apply but stores nothing, so Rollgate has nothing of
 * the floor's to reconcile), and the create of the canary's ReplicaSet. Call it after the first push (its
 * repository starts from it); returns one push's floor, in ms.
 */
async function floorOf(
  pipeline: Awaited<ReturnType<typeof startPipeline>>,
  dir: string,
): Promise<(push: number, image: string) => Promise<number>> {
  const repo = join(dir, 'floor.git');
  const kubeconfig = join(dir, 'kubeconfig');
  const manifest = join(dir, 'rollout.yaml');
  await pipeline.sandbox.writeKubeconfig(kubeconfig);
  await run$('git', ['init', '--quiet', '--bare', repo], { env: gitEnv });
  const fetch = (): Promise<unknown> =>
    run$('git', ['fetch', '--quiet', '--no-tags', pipeline.repoUrl, 'main:refs/heads/main'], {
      cwd: repo,
      env: gitEnv,
    });
  await fetch();
  return async (push, image) => {
    writeFileSync(
      manifest,
      rolloutYaml({ name: 'floor', image }).replace('argoproj.io/v1alpha1', 'rollgate.dev/v1alpha1'),
    );
    const started = performance.now();
    await fetch();
    await run$(
      KUBECTL,
      ['apply', '--server-side', '--dry-run=server', '--field-manager', 'floor', '-f', manifest],
      { env: { ...process.env, KUBECONFIG: kubeconfig } },
    );
    await pipeline.clients.apps.createNamespacedReplicaSet({
      namespace: 'default',
      body: {
        metadata: { name: `floor-${push}`, labels: { app: 'floor', push: String(push) } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'floor', push: String(push) } },
          template: {
            metadata: { labels: { app: 'floor', push: String(push) } },
            spec: { containers: [{ name: 'app', image }] },
          },
        },
      },
    });
    return performance.now() - started;
  };
}

/** The median of each push's own ratio to its floor: the figure the goal is read from. */
function floorRatio(run: PipelineRun): number {
  return median(run.latencies.map((latency, i) => latency / (run.floors[i] ?? Number.NaN)));
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
      {
        name: 'floor: git fetch + kubectl apply --server-side + ReplicaSet create',
        value: median(remote.floors),
        unit: 'ms',
        notes: `median of ${remote.floors.length}, Git server in another process, measured beside each push; in this process: ${median(local.floors).toFixed(0)} ms`,
      },
      {
        name: 'webhook → canary ÷ floor, Git server in another process',
        value: floorRatio(remote),
        unit: '×',
        goal: `≤ ${FLOOR_GOAL}×`,
        notes: `median of the pushes' own ratios (${floorRatio(remote) <= FLOOR_GOAL ? 'met' : 'NOT met'}); in this process ${floorRatio(local).toFixed(2)}×`,
      },
    ];
  } finally {
    await redis.stop();
  }
}
