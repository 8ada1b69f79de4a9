// The fleet queue: one pending pass per Fleet, deduplicated like reconcile jobs (one running, one waiting, none lost).
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { enqueueDeduplicated, type EnqueueResult } from './deduplicated-enqueue.ts';
import { jobDefaults } from './job-defaults.ts';
import type { FleetPayload } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** Producer side of the `fleet` queue. */
export class FleetQueue {
  readonly queue: Queue;
  private readonly redis: Redis;

  constructor(options: QueueConnectionOptions) {
    this.redis = options.connection;
    this.queue = openQueue('fleet', options);
  }

  /** Asks for a pass over the Fleet `namespace/name`, now or after `delayMs`. */
  async enqueue(
    fleet: Pick<FleetPayload, 'namespace' | 'name'>,
    options: { delayMs?: number; wakeUp?: boolean } = {},
  ): Promise<EnqueueResult> {
    const payload: FleetPayload = { v: 1, namespace: fleet.namespace, name: fleet.name };
    return enqueueDeduplicated(
      this.queue,
      this.redis,
      `${fleet.namespace}/${fleet.name}`,
      'fleet',
      payload,
      options.delayMs ?? 0,
      jobDefaults('fleet'),
      options.wakeUp ?? false,
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
