// A job BullMQ fails for losing its lock too often (real Redis, real lock expiry) runs again, later each time.
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../../../src/log/logger.ts';
import { describe, expect, it } from 'vitest';
import type { JobHandler, JobFinishedEvent, RunningWorker } from '../../../src/queue/start-worker.ts';
import { LOCK_LOST_REASON } from '../../../src/queue/stall-restart.ts';
import { useReconcileQueueTestbed } from '../../support/reconcile-queue-testbed.ts';
import { eventually } from '../../support/eventually.ts';

const testbed = useReconcileQueueTestbed();

/** A lock BullMQ gives up on after one missed renewal: the first stall fails the job. */
const SHORT_LOCKS = { lockDuration: 1_000, stalledInterval: 300, maxStalledCount: 0 } as const;
/** No jitter, so the restart delays are exact: 200, 400, 800 ms, then the 800 ms cap. */
const BACKOFF = { baseMs: 200, capMs: 800, jitter: 0 } as const;

/** The delays of the restarts this worker's logger reported, in order. */
function restartLog(): { logger: Logger; delays: number[] } {
  const delays: number[] = [];
  const logger: Logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        const record = JSON.parse(chunk.toString()) as { msg?: string; afterMs?: number };
        if (record.msg?.startsWith('job lost its lock') === true) delays.push(record.afterMs ?? -1);
        done();
      },
    }),
  );
  return { logger, delays };
}

/** A handler that takes the job and never returns, as a process that hangs or is about to die. */
function hangingHandler(started: string[]): JobHandler<'reconcile'> {
  return async (p) => {
    started.push(p.name);
    await new Promise(() => undefined);
    return { kind: 'done' };
  };
}

describe('a job that loses its lock more often than maxStalledCount', () => {
  it('runs again on a live worker and completes: the rollout is not left to the resync', async () => {
    const started: string[] = [];
    const dying = testbed.startWorker(hangingHandler(started), SHORT_LOCKS);
    await testbed.queue.enqueue('prod/web');
    await eventually('the job to start on the first worker', () => started.length === 1);
    // Its lock renewals stop with it; the lock in Redis runs out a second later.
    await dying.stop({ force: true });

    const runs: string[] = [];
    const finished: JobFinishedEvent[] = [];
    const { logger, delays } = restartLog();
    testbed.startWorker(
      async (p) => {
        runs.push(`${p.namespace}/${p.name}`);
        return { kind: 'done' };
      },
      { ...SHORT_LOCKS, stallRestartBackoff: BACKOFF, logger, onJobFinished: (e) => finished.push(e) },
    );
    await eventually('the rollout reconciled on the live worker', () => runs.length === 1, {
      timeoutMs: 15_000,
    });
    expect(runs).toEqual(['prod/web']);
    expect(finished.map((e) => e.outcome)).toEqual(['lock-lost', 'done']);
    expect(delays).toEqual([200]);
    const failed = await testbed.queue.queue.getFailed();
    expect(failed.map((job) => job.failedReason)).toEqual([LOCK_LOST_REASON]);
    await testbed.idle();
  }, 30_000);

  it('a job that hangs every worker is restarted later each time, never in a hot loop', async () => {
    const started: string[] = [];
    const { logger, delays } = restartLog();
    const options = { ...SHORT_LOCKS, stallRestartBackoff: BACKOFF, logger };
    let current: RunningWorker = testbed.startWorker(hangingHandler(started), options);
    await testbed.queue.enqueue('prod/web');
    for (let round = 1; round <= 4; round++) {
      await eventually(`run ${round} to start`, () => started.length === round, { timeoutMs: 15_000 });
      // The worker running it goes; the next one finds the job stalled, fails it, restarts it and hangs too.
      const hung = current;
      current = testbed.startWorker(hangingHandler(started), options);
      await hung.stop({ force: true });
    }
    await eventually('the fourth restart', () => delays.length === 4, { timeoutMs: 15_000 });
    expect(delays).toEqual([200, 400, 800, 800]);
    expect(await testbed.queue.queue.getFailedCount()).toBe(4);
  }, 60_000);
});
