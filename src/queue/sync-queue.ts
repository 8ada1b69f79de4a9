// The sync queue: apply a source's changed objects at a commit, requested once per new head.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { jobDefaults } from './job-defaults.ts';
import { syncPayloadSchema, type SyncPayload } from './job-payloads.ts';
import { CLAIMANT_FIELD, CLAIMED_FIELD, SYNCED_FIELD, observedHeadKey } from './observed-heads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** What {@link SyncQueue.request} did. */
export type SyncRequestResult =
  /** A sync job was added, or stored to run once more after the running one. */
  | 'enqueued'
  /** A sync reached the head already (the cluster-side record read by the poll was older). */
  | 'already-synced'
  /** A sync job is waiting (or waiting for a retry, or stored to run after the running one): it reads the newest head when it starts. */
  | 'already-queued'
  /** The running sync moves to this head, or has not read the newest head yet and will. */
  | 'covered-by-running';

/**
 * Decides in one step whether a head a poll saw (and recorded) needs a sync job, against the source's
 * sync job (BullMQ state) and its observation hash (who claimed which head, the last head synced).
 * KEYS: observation hash, dedup key, active, wait, paused, prioritized, delayed, dedup-next key.
 * ARGV: job key prefix, head.
 */
const DECIDE_SCRIPT = `
local rcall = redis.call
local head = ARGV[2]
if rcall('HGET', KEYS[1], '${SYNCED_FIELD}') == head then
  -- Forgotten once used: if the cluster-side record really differs (edited by hand), the next poll syncs.
  rcall('HDEL', KEYS[1], '${SYNCED_FIELD}')
  return 'already-synced'
end
local jobId = rcall('GET', KEYS[2])
if not jobId or rcall('EXISTS', ARGV[1] .. jobId) == 0 then return 'enqueued' end
if rcall('LPOS', KEYS[3], jobId) then
  if rcall('EXISTS', KEYS[8]) == 1 then return 'already-queued' end
  if rcall('HGET', KEYS[1], '${CLAIMANT_FIELD}') ~= jobId then return 'covered-by-running' end
  if rcall('HGET', KEYS[1], '${CLAIMED_FIELD}') == head then return 'covered-by-running' end
  return 'enqueued'
end
if rcall('LPOS', KEYS[4], jobId) or rcall('LPOS', KEYS[5], jobId) or rcall('ZSCORE', KEYS[6], jobId)
  or rcall('ZSCORE', KEYS[7], jobId) then
  return 'already-queued'
end
return 'enqueued'
`;

/** Producer side of the `sync` queue. */
export class SyncQueue {
  readonly queue: Queue;
  private readonly redis: Redis;
  private readonly prefix: string | undefined;

  constructor(options: QueueConnectionOptions) {
    this.redis = options.connection;
    this.prefix = options.prefix;
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
      deduplication: { id: dedupId(valid.source), keepLastIfActive: true },
    });
    return job.id;
  }

  /**
   * What a poll calls when the head it saw (`payload.commit`, recorded in the observation hash first)
   * differs from the last synced commit it read: adds a sync job only when no sync already covers that
   * head — one that reached it, one waiting (it reads the newest head when it starts), or the running
   * one when it moves to that head. Without this, every poll that ran while a sync was running (the
   * start poll beside the first scheduled one, a webhook beside a scheduled poll) added one more sync
   * of the same commit after it.
   */
  async request(payload: SyncPayload): Promise<SyncRequestResult> {
    const valid = syncPayloadSchema.parse(payload);
    const id = dedupId(valid.source);
    const keys = [
      observedHeadKey(this.prefix, valid.source),
      this.queue.toKey(`de:${id}`),
      ...['active', 'wait', 'paused', 'prioritized', 'delayed'].map((type) => this.queue.toKey(type)),
      this.queue.toKey(`dn:${id}`),
    ];
    const decision = (await this.redis.eval(
      DECIDE_SCRIPT,
      keys.length,
      ...keys,
      this.queue.toKey(''),
      valid.commit,
    )) as SyncRequestResult;
    if (decision === 'enqueued') await this.enqueue(valid);
    return decision;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

/** One deduplication id per source: one pending and one running sync job at most. */
function dedupId(source: string): string {
  return `source:${source}`;
}
