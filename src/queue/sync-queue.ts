// The sync queue: apply a source's changed objects at a commit.
import type { Queue } from 'bullmq';
import { jobDefaults } from './job-defaults.ts';
import { syncPayloadSchema, type SyncPayload } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** Producer side of the `sync` queue. */
export class SyncQueue {
  readonly queue: Queue;

  constructor(options: QueueConnectionOptions) {
    this.queue = openQueue('sync', options);
  }

  /**
   * Adds a sync job. Deduplicated per source: a sync moves the cluster to the newest branch head a
   * poll recorded when it starts (not to the payload's `commit`, which may be stale), so one pending
   * job per source is enough, and two syncs of one source never run at once (an older commit can never
   * be applied after a newer one). A request that arrives while the source's sync runs is kept and
   * runs once more afterwards.
   */
  async enqueue(payload: SyncPayload, options: { delayMs?: number } = {}): Promise<string | undefined> {
    const valid = syncPayloadSchema.parse(payload);
    const job = await this.queue.add('sync', valid, {
      ...jobDefaults('sync'),
      delay: Math.max(0, Math.round(options.delayMs ?? 0)),
      deduplication: { id: `source:${valid.source}`, keepLastIfActive: true },
    });
    return job.id;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
