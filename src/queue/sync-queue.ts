// The sync queue: apply a source's changed objects at a commit.
import { Queue } from 'bullmq';
import { jobDefaults } from './job-defaults.ts';
import { syncPayloadSchema, type SyncPayload } from './job-payloads.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';
import { bullPrefix } from './queue-names.ts';

/** Producer side of the `sync` queue. */
export class SyncQueue {
  readonly queue: Queue;

  constructor(options: QueueConnectionOptions) {
    this.queue = new Queue('sync', { connection: options.connection, prefix: bullPrefix(options.prefix) });
  }

  /**
   * Adds a sync job. Deduplicated per `source@commit`: the same commit enqueued again while its job
   * is pending is absorbed; while it runs, it is applied once more afterwards (applies are idempotent).
   */
  async enqueue(payload: SyncPayload, options: { delayMs?: number } = {}): Promise<string | undefined> {
    const valid = syncPayloadSchema.parse(payload);
    const job = await this.queue.add('sync', valid, {
      ...jobDefaults('sync'),
      delay: Math.max(0, Math.round(options.delayMs ?? 0)),
      deduplication: { id: `${valid.source}@${valid.commit}`, keepLastIfActive: true },
    });
    return job.id;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
