// Benchmark: webhook delivery → poll enqueued / poll started, and how a burst of pushes coalesces.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { redisForBench } from './private-redis.ts';
import { PollQueue } from '../src/queue/poll-queue.ts';
import { createRedisConnection } from '../src/queue/redis-connection.ts';
import { startWorker } from '../src/queue/start-worker.ts';
import { startHttpServer } from '../src/server/http-server.ts';
import { createRollgateMetrics } from '../src/server/metrics.ts';
import { createPushRouter } from '../src/server/push-router.ts';
import { hmacSha256Hex } from '../src/server/signature.ts';
import type { BenchResult } from './run.ts';
import { percentile } from './stats.ts';

const SECRET = 'bench-secret';
const REPO = 'https://github.example/acme/apps.git';

function githubPush(): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: randomUUID(),
    repository: { clone_url: REPO },
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${hmacSha256Hex(SECRET, Buffer.from(body))}`,
    },
  };
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  const connection = createRedisConnection(redis.url);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const pollQueue = new PollQueue({ connection, prefix });
  const server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    webhooks: { github: { secret: SECRET } },
    redis: connection,
    prefix,
    metrics: createRollgateMetrics({ processMetrics: false }),
    onPush: createPushRouter({ sources: [{ name: 'apps', url: REPO, branch: 'main' }], pollQueue }),
  });
  const post = async (): Promise<number> => {
    const push = githubPush();
    const res = await fetch(`${server.url}/webhooks/github`, {
      method: 'POST',
      headers: push.headers,
      body: push.body,
    });
    await res.arrayBuffer();
    return res.status;
  };

  let pollStarted: (() => void) | undefined;
  let polls = 0;
  const worker = startWorker(
    'poll',
    async () => {
      polls++;
      pollStarted?.();
      await new Promise((r) => setTimeout(r, 20));
      return { kind: 'done' };
    },
    { connection, prefix, concurrency: 4 },
  );

  try {
    for (let i = 0; i < 20; i++) await post(); // warm-up
    await new Promise((r) => setTimeout(r, 300));

    const answerMs: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      const status = await post();
      if (status !== 202) throw new Error(`webhook answered ${status}`);
      answerMs.push(performance.now() - t0);
    }
    await new Promise((r) => setTimeout(r, 300));

    const startMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = new Promise<void>((resolve) => (pollStarted = resolve));
      const t0 = performance.now();
      await post();
      await started;
      startMs.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 60));
    }
    pollStarted = undefined;

    await new Promise((r) => setTimeout(r, 300));
    const before = polls;
    await Promise.all(Array.from({ length: 50 }, () => post()));
    await new Promise((r) => setTimeout(r, 1_000));
    const burstPolls = polls - before;

    return [
      {
        name: 'webhook answered (202, poll enqueued) p50',
        value: percentile(answerMs, 50),
        unit: 'ms',
        notes: '200 signed GitHub pushes, sequential',
      },
      { name: 'webhook answered (202, poll enqueued) p95', value: percentile(answerMs, 95), unit: 'ms' },
      {
        name: 'webhook → poll job started p50',
        value: percentile(startMs, 50),
        unit: 'ms',
        notes: 'default webhookCoalesceMs 0; a worker waiting on the queue',
      },
      { name: 'webhook → poll job started p95', value: percentile(startMs, 95), unit: 'ms' },
      {
        name: 'polls run for a burst of 50 concurrent pushes',
        value: burstPolls,
        unit: 'polls',
        goal: 'a few, never 50',
      },
    ];
  } finally {
    await worker.stop();
    await server.stop();
    await pollQueue.queue.obliterate({ force: true }).catch(() => undefined);
    await pollQueue.close();
    connection.disconnect();
    await redis.stop();
  }
}
