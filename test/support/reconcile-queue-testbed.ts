// Test support: a reconcile queue under a private Redis prefix, fresh for each test of a file, workers stopped after.
import { afterEach, beforeEach, inject } from 'vitest';
import { ReconcileQueue } from '../../src/queue/reconcile-queue.ts';
import {
  startWorker,
  type JobHandler,
  type RunningWorker,
  type StartWorkerOptions,
} from '../../src/queue/start-worker.ts';
import { eventually } from './eventually.ts';
import { openRedisTestScope, type RedisTestScope } from './redis-test-prefix.ts';

/** What each test of the file gets; read it only inside tests. */
export interface ReconcileQueueTestbed {
  /** This test's Redis connection and key prefix (deleted after the test). */
  readonly scope: RedisTestScope;
  /** The reconcile queue under this test's prefix. */
  readonly queue: ReconcileQueue;
  /** Starts a reconcile worker under this test's prefix; it is force-stopped after the test. */
  startWorker(
    handler: JobHandler<'reconcile'>,
    options?: Omit<StartWorkerOptions, 'connection' | 'prefix'>,
  ): RunningWorker;
  /**
   * Waits until the queue holds no job waiting, delayed or running: every run asked for has happened, and
   * none can follow unless something enqueues again (what "and no more runs" tests wait for).
   */
  idle(): Promise<void>;
}

/** Registers the file's beforeEach/afterEach that open and clean up a {@link ReconcileQueueTestbed}. */
export function useReconcileQueueTestbed(): ReconcileQueueTestbed {
  let scope: RedisTestScope | undefined;
  let queue: ReconcileQueue | undefined;
  const workers: RunningWorker[] = [];

  beforeEach(async () => {
    scope = await openRedisTestScope(inject('redisUrl'));
    queue = new ReconcileQueue({ connection: scope.connection, prefix: scope.prefix });
  });

  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop({ force: true });
    await queue?.close();
    await scope?.cleanup();
    queue = undefined;
    scope = undefined;
  });

  const opened = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the test's ${what} was read outside a test`);
    return value;
  };
  return {
    get scope() {
      return opened(scope, 'Redis scope');
    },
    get queue() {
      return opened(queue, 'reconcile queue');
    },
    startWorker(handler, options = {}) {
      const { connection, prefix } = opened(scope, 'Redis scope');
      const worker = startWorker('reconcile', handler, { ...options, connection, prefix });
      workers.push(worker);
      return worker;
    },
    async idle() {
      const jobs = opened(queue, 'reconcile queue').queue;
      await eventually('no job waiting, delayed or running', async () => {
        const counts = await jobs.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
        return Object.values(counts).every((count) => count === 0);
      });
    },
  };
}
