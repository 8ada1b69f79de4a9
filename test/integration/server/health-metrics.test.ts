// /healthz, /readyz and /metrics against the real Redis.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { Redis } from 'ioredis';
import { PollQueue } from '../../../src/queue/poll-queue.ts';
import { ReconcileQueue } from '../../../src/queue/reconcile-queue.ts';
import { readQueueDepths } from '../../../src/queue/queue-depths.ts';
import { startHttpServer, type RunningHttpServer } from '../../../src/server/http-server.ts';
import { createRollgateMetrics, type RollgateMetrics } from '../../../src/server/metrics.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';
import { genericPush } from './webhook-requests.ts';

/** Every metric name docs/metrics.md documents. */
const DOCUMENTED_METRICS = [
  'rollgate_polls_total',
  'rollgate_git_fetch_duration_seconds',
  'rollgate_diff_objects',
  'rollgate_queue_jobs',
  'rollgate_jobs_total',
  'rollgate_job_duration_seconds',
  'rollgate_reconcile_duration_seconds',
  'rollgate_reconcile_passes_total',
  'rollgate_reconcile_errors_total',
  'rollgate_conflicts_retried_total',
  'rollgate_webhook_deliveries_total',
  'rollgate_notifications_total',
  'rollgate_dependency_up',
  'rollgate_started',
  'rollgate_syncs_total',
  'rollgate_kube_requests_total',
  'rollgate_kube_request_duration_seconds',
  'rollout_info',
  'rollout_info_replicas_available',
  'rollout_info_replicas_unavailable',
  'rollout_info_replicas_desired',
  'rollout_info_replicas_updated',
  'analysis_run_info',
];

let scope: RedisTestScope;
let server: RunningHttpServer | undefined;
let metrics: RollgateMetrics;

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  metrics = createRollgateMetrics({ processMetrics: true });
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await scope.cleanup();
});

describe('health endpoints', () => {
  it('is alive and ready when Redis answers and every check passes', async () => {
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      redis: scope.connection,
      prefix: scope.prefix,
      metrics,
      onPush: () => ({ sourcesQueued: [] }),
      readiness: [{ name: 'kubernetes', check: () => true }],
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { redis: 'ok', kubernetes: 'ok' } });
  });

  it('is alive but not ready when Redis is unreachable or a check fails, and says which (not why)', async () => {
    const deadRedis = new Redis({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    deadRedis.on('error', () => undefined);
    try {
      server = await startHttpServer({
        port: 0,
        host: '127.0.0.1',
        redis: deadRedis,
        metrics,
        onPush: () => ({ sourcesQueued: [] }),
        readiness: [
          { name: 'informer', check: () => false },
          {
            name: 'kubernetes',
            check: () => {
              throw new Error('API server unreachable');
            },
          },
        ],
      });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const res = await fetch(`${server.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { ready: boolean; checks: Record<string, string> };
      expect(body).toEqual({
        ready: false,
        checks: { redis: 'failed', informer: 'failed', kubernetes: 'failed' },
      });
    } finally {
      deadRedis.disconnect();
    }
  });

  it('shows a degraded check without turning unready, and turns unready on a failing report', async () => {
    let blocks = false;
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      redis: scope.connection,
      metrics,
      onPush: () => ({ sourcesQueued: [] }),
      readiness: [
        { name: 'kubernetes', check: () => ({ ok: false, blocksReadiness: blocks, detail: 'HTTP 500' }) },
      ],
    });
    const degraded = await fetch(`${server.url}/readyz`);
    expect(degraded.status).toBe(200);
    expect(await degraded.json()).toEqual({
      ready: true,
      checks: { redis: 'ok', kubernetes: 'degraded' },
    });
    blocks = true;
    const failed = await fetch(`${server.url}/readyz`);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toEqual({
      ready: false,
      checks: { redis: 'ok', kubernetes: 'failed' },
    });
  });

  it('tells the caller of /readyz no error detail (hosts, addresses, messages): the log has it, once per change', async () => {
    const out = new PassThrough();
    let logged = '';
    out.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const secretish = 'connect ECONNREFUSED 10.20.30.40:6443 (api.internal.corp.example)';
    let failing = true;
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      redis: scope.connection,
      metrics,
      logger: createLogger({ level: 'info', format: 'json', destination: out }),
      onPush: () => ({ sourcesQueued: [] }),
      readiness: [
        {
          name: 'kubernetes',
          check: () => {
            if (failing) throw new Error(secretish);
            return true;
          },
        },
        {
          name: 'git/apps',
          check: () => ({
            ok: false,
            blocksReadiness: false,
            detail: 'fetch https://git.internal.corp.example/apps.git: 503',
          }),
        },
      ],
    });
    for (let probe = 0; probe < 3; probe += 1) {
      const res = await fetch(`${server.url}/readyz`);
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        ready: false,
        checks: { redis: 'ok', kubernetes: 'failed', 'git/apps': 'degraded' },
      });
      expect(text).not.toMatch(/internal|10\.20\.30\.40|ECONNREFUSED|503:/);
    }
    failing = false;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const lines = logged
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => typeof l.check === 'string');
    // Three probes, one line per change: failed, degraded, then ok again.
    expect(lines.map((l) => [l.check, l.state, l.detail])).toEqual([
      ['kubernetes', 'failed', secretish],
      ['git/apps', 'degraded', 'fetch https://git.internal.corp.example/apps.git: 503'],
      ['kubernetes', 'ok', undefined],
    ]);
  });

  it('answers 404 for unknown paths and providers, 405 for wrong methods', async () => {
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      redis: scope.connection,
      metrics,
      onPush: () => ({ sourcesQueued: [] }),
    });
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/webhooks/svn`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${server.url}/webhooks/constructor`, { method: 'POST', body: '{}' })).status).toBe(
      404,
    );
    expect((await fetch(`${server.url}/webhooks/github`)).status).toBe(405);
    expect((await fetch(`${server.url}/healthz`, { method: 'DELETE' })).status).toBe(405);
  });
});

describe('GET /metrics', () => {
  it('exposes every documented metric, webhook outcomes and queue depths read at scrape time', async () => {
    const pollQueue = new PollQueue({ connection: scope.connection, prefix: scope.prefix });
    const reconcileQueue = new ReconcileQueue({ connection: scope.connection, prefix: scope.prefix });
    try {
      metrics.setQueueDepthSource(() => readQueueDepths([pollQueue, reconcileQueue]));
      server = await startHttpServer({
        port: 0,
        host: '127.0.0.1',
        webhooks: { generic: { secret: 's' } },
        redis: scope.connection,
        prefix: scope.prefix,
        metrics,
        onPush: async () => {
          await pollQueue.enqueuePoll('apps', 'webhook');
          return { sourcesQueued: ['apps'] };
        },
      });
      await reconcileQueue.enqueue('prod/web');
      await reconcileQueue.enqueue('prod/api');
      const push = genericPush('https://git.example/acme/apps', { branch: 'main', secret: 's' });
      await fetch(`${server.url}/webhooks/generic`, {
        method: 'POST',
        headers: push.headers,
        body: push.body,
      });
      await fetch(`${server.url}/webhooks/generic`, {
        method: 'POST',
        headers: { ...push.headers, 'x-rollgate-signature': 'sha256=00' },
        body: push.body,
      });
      metrics.pollsTotal.inc({ source: 'apps', result: 'unchanged' });

      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const text = await res.text();
      for (const name of DOCUMENTED_METRICS) expect(text).toContain(`# TYPE ${name} `);
      expect(text).toContain('rollgate_webhook_deliveries_total{provider="generic",outcome="accepted"} 1');
      expect(text).toContain(
        'rollgate_webhook_deliveries_total{provider="generic",outcome="unauthorized"} 1',
      );
      expect(text).toContain('rollgate_queue_jobs{queue="reconcile",state="waiting"} 2');
      expect(text).toContain('rollgate_queue_jobs{queue="poll",state="waiting"} 1');
      expect(text).toContain('rollgate_polls_total{source="apps",result="unchanged"} 1');
      expect(text).toContain('process_cpu_seconds_total');
    } finally {
      await pollQueue.close();
      await reconcileQueue.close();
    }
  });
});

describe('enqueue failure', () => {
  it('answers 503 when the poll cannot be enqueued, and processes the redelivery of that id', async () => {
    let failing = true;
    let handled = 0;
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      webhooks: { generic: { secret: 's' } },
      redis: scope.connection,
      prefix: scope.prefix,
      metrics,
      onPush: () => {
        if (failing) throw new Error('Redis is read-only');
        handled++;
        return { sourcesQueued: ['apps'] };
      },
    });
    const push = genericPush('https://git.example/acme/apps', {
      branch: 'main',
      secret: 's',
      deliveryId: 'd-1',
    });
    const send = (): Promise<Response> =>
      fetch(`${server?.url ?? ''}/webhooks/generic`, {
        method: 'POST',
        headers: push.headers,
        body: push.body,
      });
    const first = await send();
    expect(first.status).toBe(503);
    expect(JSON.stringify(await first.json())).not.toContain('Redis is read-only');
    failing = false;
    const redelivery = await send();
    expect(redelivery.status).toBe(202);
    expect(handled).toBe(1);
  });
});
