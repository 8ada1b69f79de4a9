// The poll queue: a job scheduler per source at its interval, and coalesced on-demand polls.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { enqueueDeduplicated, type EnqueueResult } from './deduplicated-enqueue.ts';
import { jobDefaults } from './job-defaults.ts';
import type { PollPayload, PollReason } from './job-payloads.ts';
import { openQueue } from './open-queue.ts';
import { pollOffsetMs } from './poll-offset.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';

/** A source as the poll schedule sees it. */
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
   * Creates or updates the job scheduler that polls `source` every `intervalMs` (any process may call
   * it), at its own offset within the interval (see {@link pollOffsetMs}).
   */
  async upsertSchedule(schedule: PollSchedule): Promise<void> {
    if (!(schedule.intervalMs > 0)) throw new RangeError(`poll interval of ${schedule.source} must be > 0`);
    const payload: PollPayload = { v: 1, source: schedule.source, reason: 'schedule' };
    await this.queue.upsertJobScheduler(
      `${SCHEDULER_ID_PREFIX}${schedule.source}`,
      { every: schedule.intervalMs, offset: pollOffsetMs(schedule.source, schedule.intervalMs) },
      { name: 'poll', data: payload, opts: jobDefaults('poll') },
    );
  }

  /** Removes the scheduler of `source`; true when one existed. */
  async removeSchedule(source: string): Promise<boolean> {
    return this.queue.removeJobScheduler(`${SCHEDULER_ID_PREFIX}${source}`);
  }

  /** The sources that currently have a scheduler, with their intervals. */
  async listSchedules(): Promise<PollSchedule[]> {
    const schedulers = await this.queue.getJobSchedulers(0, -1, true);
    return schedulers
      .filter((s) => s.key.startsWith(SCHEDULER_ID_PREFIX) && s.every !== undefined)
      .map((s) => ({ source: s.key.slice(SCHEDULER_ID_PREFIX.length), intervalMs: s.every ?? 0 }));
  }

  /**
   * Makes the schedulers match `schedules` exactly: upserts each one (a changed interval takes effect)
   * and removes the schedulers of sources no longer configured. Returns the removed source names.
   */
  async syncSchedules(schedules: readonly PollSchedule[]): Promise<string[]> {
    const wanted = new Set(schedules.map((s) => s.source));
    const removed: string[] = [];
    for (const existing of await this.listSchedules()) {
      if (!wanted.has(existing.source) && (await this.removeSchedule(existing.source)))
        removed.push(existing.source);
    }
    for (const schedule of schedules) await this.upsertSchedule(schedule);
    return removed;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
