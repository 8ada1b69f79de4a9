// The notify queue: one job per transition and per delivery, ever — a Redis marker (SET NX with a TTL) makes a second add a no-op.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { jobDefaults } from './job-defaults.ts';
import type { NotifyPayload } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';
import { bullPrefix } from './queue-names.ts';

/**
 * How long a transition is remembered as notified. Finished jobs are dropped after an hour (Redis holds
 * work in flight, not history), so the marker, a few bytes, is what stops a late duplicate: the same
 * transition seen again by another process, or after a restart, within this time.
 */
export const NOTIFY_ONCE_TTL_SECONDS = 14 * 24 * 3600;

/** What an add did: `duplicate` means a job for the same key was added before (by any process). */
export type NotifyAddResult = 'added' | 'duplicate';

/** The BullMQ job id of a notify payload: a digest of its key (ids may not hold `:`, keys may). */
export function notifyJobId(payload: Pick<NotifyPayload, 'kind' | 'key'>): string {
  return `${payload.kind}-${createHash('sha256').update(payload.key).digest('hex').slice(0, 40)}`;
}

/** Producer side of the `notify` queue, plus the "already sent" marks its worker keeps. */
export class NotifyQueue {
  readonly queue: Queue;
  private readonly redis: Redis;
  private readonly markers: string;

  constructor(options: QueueConnectionOptions) {
    this.redis = options.connection;
    this.queue = openQueue('notify', options);
    this.markers = `${bullPrefix(options.prefix)}:notify`;
  }

  /**
   * Adds the job unless a job with the same key was added within {@link NOTIFY_ONCE_TTL_SECONDS}. The
   * marker is set first with SET NX, so of two processes adding the same key at once exactly one adds;
   * an add that fails removes its marker again so a retry can add it.
   */
  async add(payload: NotifyPayload, options: { delayMs?: number } = {}): Promise<NotifyAddResult> {
    const id = notifyJobId(payload);
    const marker = `${this.markers}:once:${id}`;
    const set = await this.redis.set(marker, '1', 'EX', NOTIFY_ONCE_TTL_SECONDS, 'NX');
    if (set !== 'OK') return 'duplicate';
    try {
      await this.queue.add(payload.kind, payload, {
        ...jobDefaults('notify'),
        jobId: id,
        ...(options.delayMs ? { delay: options.delayMs } : {}),
      });
    } catch (err) {
      await this.redis.del(marker).catch(() => undefined);
      throw err;
    }
    return 'added';
  }

  /** True when the delivery of `payload` was sent already (its job ran before and died before finishing). */
  async wasSent(payload: Pick<NotifyPayload, 'kind' | 'key'>): Promise<boolean> {
    return (await this.redis.exists(`${this.markers}:sent:${notifyJobId(payload)}`)) === 1;
  }

  /** Records that the delivery of `payload` was sent, so a re-run of its job does not send it again. */
  async markSent(payload: Pick<NotifyPayload, 'kind' | 'key'>): Promise<void> {
    await this.redis.set(`${this.markers}:sent:${notifyJobId(payload)}`, '1', 'EX', NOTIFY_ONCE_TTL_SECONDS);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
