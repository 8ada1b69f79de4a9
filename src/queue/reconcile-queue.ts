// The reconcile queue: one pending job per rollout, wake-ups never lost, earlier wake-ups win.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { enqueueDeduplicated, type EnqueueResult } from './deduplicated-enqueue.ts';
import { jobDefaults } from './job-defaults.ts';
import { parseReconcileJobKey } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** Producer side of the `reconcile` queue. */
export class ReconcileQueue {
  /** The underlying BullMQ queue (for depth metrics and tests). */
  readonly queue: Queue;
  private readonly redis: Redis;

  constructor(options: QueueConnectionOptions) {
    this.redis = options.connection;
    this.queue = openQueue('reconcile', options);
  }

  /**
   * Asks for a reconcile of rollout `key` (`namespace/name`), or of a standalone AnalysisRun
   * (`namespace/analysisruns/name`, see reconcileJobKey), now or after `delayMs`. `wakeUp: true`
   * marks the planner's requeueAfter of a finished run (the worker glue sets it). See
   * enqueueDeduplicated for the guarantees.
   */
  async enqueue(key: string, options: { delayMs?: number; wakeUp?: boolean } = {}): Promise<EnqueueResult> {
    const payload = parseReconcileJobKey(key);
    return enqueueDeduplicated(
      this.queue,
      this.redis,
      key,
      'reconcile',
      payload,
      options.delayMs ?? 0,
      jobDefaults('reconcile'),
      options.wakeUp ?? false,
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
