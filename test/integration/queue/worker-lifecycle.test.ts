// Worker lifecycle against the real Redis: a killed worker's job moves to another, a stalled one learns its lease is lost, shutdown is graceful.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { LeaseLostError } from '../../../src/queue/job-lease.ts';
import type { JobContext, JobFinishedEvent } from '../../../src/queue/start-worker.ts';
import { useReconcileQueueTestbed } from '../../support/reconcile-queue-testbed.ts';
import { eventually } from '../../support/eventually.ts';
import { gate } from '../../support/redis-test-prefix.ts';

const testbed = useReconcileQueueTestbed();

describe('worker crash and shutdown', () => {
  it('hands the job of a killed worker to another worker once its lock expires', async () => {
    const fixture = fileURLToPath(new URL('./crashing-worker.fixture.ts', import.meta.url));
    const args = ['--import', 'tsx', fixture, inject('redisUrl'), testbed.scope.prefix];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await eventually('the worker process', () => output.includes('ready'), { timeoutMs: 20_000 });
      await testbed.queue.enqueue('prod/web');
      await eventually('its job to start', () => output.includes('started prod/web'), { timeoutMs: 10_000 });
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));

      const runs: string[] = [];
      testbed.startWorker(
        async (p) => {
          runs.push(`${p.namespace}/${p.name}`);
          return { kind: 'done' };
        },
        { lockDuration: 1_000, stalledInterval: 300 },
      );
      await eventually('the job on the second worker', () => runs.length === 1, { timeoutMs: 10_000 });
      expect(runs).toEqual(['prod/web']);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 40_000);

  it('tells a job whose lock was taken over that its lease is lost, while the new run goes ahead', async () => {
    const hold = gate();
    const runs: string[] = [];
    let first: JobContext | undefined;
    testbed.startWorker(
      async (_p, job) => {
        runs.push('first');
        first = job;
        await hold.promise;
        return { kind: 'done' };
      },
      { lockDuration: 1_000 },
    );
    await testbed.queue.enqueue('prod/web');
    await eventually('the job running on the first worker', () => first !== undefined);
    // Held: confirming renews the lock and resolves.
    await first!.lease.confirm();
    // What a starved process sees: its lock expired (deleted here, as expiry does) and a live worker's
    // stall check hands the job to that worker.
    await testbed.scope.connection.del(testbed.queue.queue.toKey(`${first!.jobId}:lock`));
    testbed.startWorker(
      async () => {
        runs.push('takeover');
        return { kind: 'done' };
      },
      { lockDuration: 1_000, stalledInterval: 300 },
    );
    await eventually('the job run again by the second worker', () => runs.includes('takeover'), {
      timeoutMs: 10_000,
    });
    await expect(first!.lease.confirm()).rejects.toBeInstanceOf(LeaseLostError);
    hold.open();
    expect(runs).toEqual(['first', 'takeover']);
  });

  it('stops gracefully: the running job finishes, its requeue is written, no new job starts', async () => {
    const hold = gate();
    const finished: JobFinishedEvent[] = [];
    const started: string[] = [];
    const w = testbed.startWorker(
      async (p) => {
        started.push(p.name);
        await hold.promise;
        return { kind: 'requeue', afterMs: 60_000, reason: 'pause' };
      },
      { onJobFinished: (e) => finished.push(e) },
    );
    await testbed.queue.enqueue('prod/web');
    await eventually('the job to start', () => started.length === 1);
    const closing = new Promise<void>((resolve) => w.worker.once('closing', () => resolve()));
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    // The stop has begun (BullMQ says so) and a job enqueued since is stored and left waiting: the stop
    // still waits for the held job.
    await closing;
    await testbed.queue.enqueue('prod/api');
    await eventually(
      'the second job stored',
      async () => (await testbed.queue.queue.getWaitingCount()) === 1,
    );
    expect(stopped).toBe(false);
    hold.open();
    await stopping;
    expect(started).toEqual(['web']);
    expect(finished.map((e) => e.outcome)).toEqual(['requeue']);
    const counts = await testbed.queue.queue.getJobCounts('completed', 'delayed', 'waiting', 'active');
    expect(counts).toEqual({ completed: 1, delayed: 1, waiting: 1, active: 0 });
  });
});
