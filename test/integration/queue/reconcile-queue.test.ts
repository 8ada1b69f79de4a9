// Reconcile queue against the real Redis: one pending job per rollout, none lost, earlier wake-ups win.
import { describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../../src/queue/start-worker.ts';
import type { ReconcilePayload } from '../../../src/queue/job-payloads.ts';
import type { JobOutcome } from '../../../src/queue/job-outcome.ts';
import type { EnqueueResult } from '../../../src/queue/deduplicated-enqueue.ts';
import { useReconcileQueueTestbed } from '../../support/reconcile-queue-testbed.ts';
import { eventually } from '../../support/eventually.ts';
import { gate } from '../../support/redis-test-prefix.ts';

const testbed = useReconcileQueueTestbed();

/** A worker that retries fast (30 ms base backoff) so retries show within a test. */
function worker(handler: (p: ReconcilePayload) => Promise<JobOutcome>, concurrency = 4): RunningWorker {
  return testbed.startWorker(handler, { concurrency, retryBackoff: { baseMs: 30, capMs: 100, jitter: 0 } });
}

describe('ReconcileQueue.enqueue', () => {
  it('keeps one pending job when the same rollout is enqueued 10 times', async () => {
    const results: EnqueueResult[] = [];
    for (let i = 0; i < 10; i++) results.push(await testbed.queue.enqueue('prod/web'));
    await testbed.queue.enqueue('prod/api');
    const counts = await testbed.queue.queue.getJobCounts('waiting', 'delayed', 'active');
    expect(counts.waiting).toBe(2);
    expect(results[0]?.action).toBe('added');
    expect(results.slice(1).every((r) => r.action === 'coalesced' && r.jobId === results[0]?.jobId)).toBe(
      true,
    );
  });

  it('runs exactly once more when enqueued (many times) while its job runs, never in parallel', async () => {
    const hold = gate();
    const runs: string[] = [];
    let running = 0;
    let maxParallel = 0;
    worker(async (p) => {
      running++;
      maxParallel = Math.max(maxParallel, running);
      runs.push(`${p.namespace}/${p.name}`);
      if (runs.length === 1) await hold.promise;
      running--;
      return { kind: 'done' };
    });
    await testbed.queue.enqueue('prod/web');
    await eventually('the first run', () => runs.length === 1);
    const during: EnqueueResult[] = [];
    for (let i = 0; i < 5; i++) during.push(await testbed.queue.enqueue('prod/web'));
    expect(during.every((r) => r.action === 'after-active')).toBe(true);
    hold.open();
    await eventually('the run after it', () => runs.length === 2);
    await testbed.idle();
    expect(runs).toEqual(['prod/web', 'prod/web']);
    expect(maxParallel).toBe(1);
  });

  it('turns a requeue outcome into one delayed run after afterMs', async () => {
    const runAt: number[] = [];
    worker(async () => {
      runAt.push(performance.now());
      return runAt.length === 1 ? { kind: 'requeue', afterMs: 400, reason: 'pause' } : { kind: 'done' };
    });
    await testbed.queue.enqueue('prod/web');
    await eventually('the requeued run', () => runAt.length === 2, { timeoutMs: 5_000 });
    const [first = 0, second = 0] = runAt;
    expect(second - first).toBeGreaterThanOrEqual(380);
    await testbed.idle();
    expect(runAt).toHaveLength(2);
  });

  it('lets an earlier wake-up win over a later one and never adds a second delayed job', async () => {
    const later = await testbed.queue.enqueue('prod/web', { delayMs: 60_000 });
    expect(later.action).toBe('added');
    const evenLater = await testbed.queue.enqueue('prod/web', { delayMs: 120_000 });
    expect(evenLater.action).toBe('coalesced');
    const earlier = await testbed.queue.enqueue('prod/web', { delayMs: 300 });
    expect(earlier.action).toBe('rescheduled');
    expect(await testbed.queue.queue.getJobCounts('delayed', 'waiting')).toEqual({ delayed: 1, waiting: 0 });

    const runs: number[] = [];
    const started = performance.now();
    worker(async () => {
      runs.push(performance.now() - started);
      return { kind: 'done' };
    });
    await eventually('the rescheduled run', () => runs.length === 1, { timeoutMs: 5_000 });
    expect(runs[0]).toBeLessThan(5_000);
  });

  it('runs a delayed rollout at once when an immediate request arrives', async () => {
    await testbed.queue.enqueue('prod/web', { delayMs: 60_000 });
    const now = await testbed.queue.enqueue('prod/web');
    expect(now.action).toBe('rescheduled');
    const runs: string[] = [];
    worker(async (p) => {
      runs.push(p.name);
      return { kind: 'done' };
    });
    await eventually('the run', () => runs.length === 1, { timeoutMs: 3_000 });
    expect(await testbed.queue.queue.getJobCounts('delayed')).toEqual({ delayed: 0 });
  });

  it('drops a timer wake-up while the rollout runs (the run decides its own next wake-up)', async () => {
    const hold = gate();
    let runs = 0;
    worker(async () => {
      runs++;
      if (runs === 1) await hold.promise;
      return { kind: 'done' };
    });
    await testbed.queue.enqueue('prod/web');
    await eventually('the first run', () => runs === 1);
    expect((await testbed.queue.enqueue('prod/web', { delayMs: 50, wakeUp: true })).action).toBe(
      'skipped-active',
    );
    hold.open();
    await testbed.idle();
    expect(runs).toBe(1);
  });

  it('retries a thrown error with backoff, and fails a stalled outcome at once without retry', async () => {
    const attempts = new Map<string, number>();
    worker(async (p) => {
      const n = (attempts.get(p.name) ?? 0) + 1;
      attempts.set(p.name, n);
      if (p.name === 'flaky' && n < 3) throw new Error('409 conflict, try again');
      if (p.name === 'broken') return { kind: 'stalled', reason: 'spec is invalid' };
      return { kind: 'done' };
    });
    await testbed.queue.enqueue('prod/flaky');
    await testbed.queue.enqueue('prod/broken');
    await eventually(
      'the stalled job to fail',
      async () => (await testbed.queue.queue.getJobCounts('completed', 'failed')).failed === 1,
      { timeoutMs: 5_000 },
    );
    await eventually('the third attempt', () => attempts.get('flaky') === 3, { timeoutMs: 5_000 });
    await testbed.idle();
    expect(attempts.get('broken')).toBe(1);
    const [failed] = await testbed.queue.queue.getFailed();
    expect(failed?.failedReason).toContain('spec is invalid');
    // The rollout is free again: a new request after a failure is a new job, not swallowed.
    expect((await testbed.queue.enqueue('prod/broken')).action).toBe('added');
  });

  it('rejects a key that is not namespace/name', async () => {
    await expect(testbed.queue.enqueue('web')).rejects.toThrow(/namespace\/name/);
  });
});
