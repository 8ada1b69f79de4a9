// The poll queue: coalesced on-demand polls (webhook, start), and the removal of old per-source schedulers.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { enqueueDeduplicated, type EnqueueResult } from './deduplicated-enqueue.ts';
import { jobDefaults } from './job-defaults.ts';
import type { PollPayload, PollReason } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** A source as the poll timetable sees it. */
export interface PollSchedule {
  /** The source's configured name (unique). */
  source: string;
  /** Poll interval in ms. */
  intervalMs: number;
}

export interface PollQueueOptions extends QueueConnectionOptions {
  /**
   * How long an on-demand (webhook) poll waits before it runs, in ms (default 0). Every request for
   * the same source while its poll waits (including this window) becomes that one poll; requests
   * that arrive while it runs cause exactly one more poll afterwards. Any delay also costs BullMQ's
   * delayed-job promotion (measured +40..90 ms), so the default relies on deduplication alone.
   */
  webhookCoalesceMs?: number;
}

const SCHEDULER_ID_PREFIX = 'source:';

/** Producer side of the `poll` queue. */
export class PollQueue {
  readonly queue: Queue;
  private readonly redis: Redis;
  private readonly webhookCoalesceMs: number;

  constructor(options: PollQueueOptions) {
    this.redis = options.connection;
    this.webhookCoalesceMs = options.webhookCoalesceMs ?? 0;
    this.queue = openQueue('poll', options);
  }

  /**
   * Asks for a poll of `source` now (after the coalescing window for `webhook`), or after `delayMs`.
   * Deduplicated per source exactly like reconcile jobs: one pending, one running, none lost.
   */
  async enqueuePoll(
    source: string,
    reason: PollReason,
    options: { delayMs?: number; wakeUp?: boolean } = {},
  ): Promise<EnqueueResult> {
    const payload: PollPayload = { v: 1, source, reason };
    const delayMs = options.delayMs ?? (reason === 'webhook' ? this.webhookCoalesceMs : 0);
    return enqueueDeduplicated(
      this.queue,
      this.redis,
      `${SCHEDULER_ID_PREFIX}${source}`,
      'poll',
      payload,
      delayMs,
      jobDefaults('poll'),
      options.wakeUp ?? false,
    );
  }

  /**
   * The sources that have a BullMQ job scheduler, with their intervals. Scheduled polls no longer use
   * them (the poll lease's holder polls in-process, see ScheduledPolls); versions before that left one
   * per source, each still adding a job every interval.
   */
  async listSchedules(): Promise<PollSchedule[]> {
    const schedulers = await this.queue.getJobSchedulers(0, -1, true);
    return schedulers
      .filter((s) => s.key.startsWith(SCHEDULER_ID_PREFIX) && s.every !== undefined)
      .map((s) => ({ source: s.key.slice(SCHEDULER_ID_PREFIX.length), intervalMs: s.every ?? 0 }));
  }

  /** Removes every per-source job scheduler (left by an earlier version); returns their sources. */
  async removeSchedules(): Promise<string[]> {
    const removed: string[] = [];
    for (const { source } of await this.listSchedules()) {
      if (await this.queue.removeJobScheduler(`${SCHEDULER_ID_PREFIX}${source}`)) removed.push(source);
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
