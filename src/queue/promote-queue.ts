// The promote queue: one pending job per promotion and rollout, wake-ups never lost, earlier wake-ups win.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { enqueueDeduplicated, type EnqueueResult } from './deduplicated-enqueue.ts';
import { jobDefaults } from './job-defaults.ts';
import type { PromotePayload } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** Producer side of the `promote` queue. */
export class PromoteQueue {
  readonly queue: Queue;
  private readonly redis: Redis;

  constructor(options: QueueConnectionOptions) {
    this.redis = options.connection;
    this.queue = openQueue('promote', options);
  }

  /** Asks for a look at `promotion` for rollout `namespace/name`, now or after `delayMs`. */
  async enqueue(
    target: { promotion: string; namespace: string; name: string },
    options: { delayMs?: number; wakeUp?: boolean } = {},
  ): Promise<EnqueueResult> {
    const payload: PromotePayload = { v: 1, ...target };
    return enqueueDeduplicated(
      this.queue,
      this.redis,
      `${target.promotion}/${target.namespace}/${target.name}`,
      'promote',
      payload,
      options.delayMs ?? 0,
      jobDefaults('promote'),
      options.wakeUp ?? false,
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
