// Worker lifecycle against the real Redis: a killed worker's job moves to another, shutdown is graceful.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ReconcileQueue } from '../../../src/queue/reconcile-queue.ts';
import { startWorker, type RunningWorker } from '../../../src/queue/start-worker.ts';
import type { JobFinishedEvent } from '../../../src/queue/start-worker.ts';
import { eventually, gate, openRedisTestScope, type RedisTestScope } from './redis-test-prefix.ts';

let scope: RedisTestScope;
let queue: ReconcileQueue;
const workers: RunningWorker[] = [];

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  queue = new ReconcileQueue({ connection: scope.connection, prefix: scope.prefix });
});

afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop({ force: true });
  await queue.close();
  await scope.cleanup();
});

describe('worker crash and shutdown', () => {
  it('hands the job of a killed worker to another worker once its lock expires', async () => {
    const fixture = fileURLToPath(new URL('./crashing-worker.fixture.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, inject('redisUrl'), scope.prefix], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await eventually(() => output.includes('ready'), 20_000);
      await queue.enqueue('prod/web');
      await eventually(() => output.includes('started prod/web'), 10_000);
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));

      const runs: string[] = [];
      const rescuer = startWorker(
        'reconcile',
        async (p) => {
          runs.push(`${p.namespace}/${p.name}`);
          return { kind: 'done' };
        },
        { connection: scope.connection, prefix: scope.prefix, lockDuration: 1_000, stalledInterval: 300 },
      );
      workers.push(rescuer);
      await eventually(() => runs.length === 1, 10_000);
      expect(runs).toEqual(['prod/web']);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 40_000);

  it('stops gracefully: the running job finishes, its requeue is written, no new job starts', async () => {
    const hold = gate();
    const finished: JobFinishedEvent[] = [];
    const started: string[] = [];
    const w = startWorker(
      'reconcile',
      async (p) => {
        started.push(p.name);
        await hold.promise;
        return { kind: 'requeue', afterMs: 60_000, reason: 'pause' };
      },
      { connection: scope.connection, prefix: scope.prefix, onJobFinished: (e) => finished.push(e) },
    );
    workers.push(w);
    await queue.enqueue('prod/web');
    await eventually(() => started.length === 1);
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 150));
    expect(stopped).toBe(false);
    await queue.enqueue('prod/api');
    hold.open();
    await stopping;
    expect(started).toEqual(['web']);
    expect(finished.map((e) => e.outcome)).toEqual(['requeue']);
    const counts = await queue.queue.getJobCounts('completed', 'delayed', 'waiting', 'active');
    expect(counts).toEqual({ completed: 1, delayed: 1, waiting: 1, active: 0 });
  });
});
