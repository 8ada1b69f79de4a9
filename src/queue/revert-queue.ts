// The revert queue: one pending job per aborted revision of a Rollout, so a revision is written back once.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { enqueueDeduplicated, type EnqueueResult } from './deduplicated-enqueue.ts';
import { jobDefaults } from './job-defaults.ts';
import type { RevertPayload } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** Producer side of the `revert` queue. */
export class RevertQueue {
  readonly queue: Queue;
  private readonly redis: Redis;

  constructor(options: QueueConnectionOptions) {
    this.redis = options.connection;
    this.queue = openQueue('revert', options);
  }

  /** Asks for a look at the aborted `revision` of `namespace/name` synced by `source`. */
  async enqueue(
    target: { source: string; namespace: string; name: string; revision: string },
    options: { delayMs?: number; wakeUp?: boolean } = {},
  ): Promise<EnqueueResult> {
    const payload: RevertPayload = { v: 1, ...target };
    return enqueueDeduplicated(
      this.queue,
      this.redis,
      `${target.source}/${target.namespace}/${target.name}/${target.revision}`,
      'revert',
      payload,
      options.delayMs ?? 0,
      jobDefaults('revert'),
      options.wakeUp ?? false,
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
