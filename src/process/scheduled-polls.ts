// The scheduled polls of every source, run in-process by whichever poller holds the poll lease.
import type { Clock } from '../clock/clock.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import type { PollLease } from '../queue/poll-lease.ts';
import type { PollSchedule } from '../queue/poll-queue.ts';
import { PollTimetable } from '../queue/poll-timetable.ts';

/** How long a stop waits for the lease's release before leaving it to run out. */
const RELEASE_WAIT_MS = 1_000;

export interface ScheduledPollsOptions {
  lease: Pick<PollLease, 'hold' | 'release'>;
  /** This process's id in the lease (unique per process). */
  holder: string;
  schedules: readonly PollSchedule[];
  /**
   * Runs one scheduled poll of `source` and reports its outcome itself (status, metrics, logs); never
   * rejects. Returns undefined when it did not start one because a poll of that source is still running
   * in this process: the slow source is polled again at its next time, the others are not held up.
   */
  poll: (source: string) => Promise<void> | undefined;
  clock: Clock;
  /** The lease runs out this long after its last renewal (renewed every third of it). */
  leaseTtlMs: number;
  /** How often the process looks for due polls, in ms (default 250, or the shortest interval if less): how late a poll may start. */
  tickMs?: number;
  logger?: Logger;
}

/**
 * Scheduled polls without a BullMQ job per poll. Every poller process runs this; only the lease holder
 * polls. Each source is polled on its own grid ({@link PollTimetable}: every interval at an offset from
 * its name), so the polls of many sources stay spread over the interval, and a process taking the lease
 * over keeps them where they were. A holder polls only while its lease is surely its own: until `ttlMs`
 * after the moment it asked for the renewal that succeeded.
 */
export class ScheduledPolls {
  private readonly timetable: PollTimetable;
  private readonly log: Logger;
  private readonly tickMs: number;
  private validUntil = 0;
  private renewAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<string[]> | undefined;
  private readonly running = new Set<Promise<void>>();
  private leaseFailureLogged = false;
  private stopped = false;

  constructor(private readonly options: ScheduledPollsOptions) {
    this.timetable = new PollTimetable(options.schedules, options.clock.now().getTime());
    this.log = options.logger ?? silentLogger;
    // Never coarser than the shortest interval: a 100 ms interval still polls every 100 ms.
    this.tickMs =
      options.tickMs ?? Math.max(10, Math.min(250, ...options.schedules.map((s) => s.intervalMs)));
  }

  /** True while this process holds the lease (it runs the scheduled polls). */
  get holding(): boolean {
    return this.options.clock.now().getTime() < this.validUntil;
  }

  /** Polls running now that this started. */
  get inFlight(): number {
    return this.running.size;
  }

  /**
   * Adds a source that appeared (a GitSource created), or changes its interval; its first scheduled poll is
   * its next grid time (the caller asks for the poll at once).
   */
  setSchedule(schedule: PollSchedule): void {
    this.timetable.set(schedule, this.options.clock.now().getTime());
  }

  /** Stops scheduling a source that went away (a running poll of it ends by itself). */
  removeSchedule(source: string): void {
    this.timetable.delete(source);
  }

  /** Looks every `tickMs` (real time; what is due is decided from the clock). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
      });
    }, this.tickMs);
    this.timer.unref();
  }

  /**
   * One look: renews (or tries to take) the lease when due, then, while it is held, starts the polls that
   * are due. Returns the sources whose poll it started.
   */
  async tick(): Promise<string[]> {
    const { clock, lease, leaseTtlMs, holder } = this.options;
    const now = clock.now().getTime();
    if (this.stopped) return [];
    if (now >= this.renewAt) {
      this.renewAt = now + leaseTtlMs / 3;
      const wasHolding = now < this.validUntil;
      let held = false;
      try {
        held = await lease.hold(holder, leaseTtlMs);
        this.leaseFailureLogged = false;
      } catch (error) {
        // Not knowing is not holding: another process may have it by the time Redis answers again.
        if (!this.leaseFailureLogged)
          this.log.warn({ err: (error as Error).message }, 'poll lease not renewed; scheduled polls paused');
        this.leaseFailureLogged = true;
      }
      if (this.stopped) return [];
      if (held) {
        this.validUntil = now + leaseTtlMs;
        if (!wasHolding) {
          // What was due while another process held the lease was its to poll: start on the grid from now.
          this.timetable.restart(now);
          this.log.info({ sources: this.timetable.size }, 'scheduled polls taken over');
        }
      } else {
        this.validUntil = 0;
        if (wasHolding) this.log.info('scheduled polls handed over to another process');
      }
    }
    if (this.stopped || now >= this.validUntil) return [];
    const started: string[] = [];
    for (const source of this.timetable.due(now)) {
      const run = this.options.poll(source);
      if (run === undefined) {
        this.log.debug({ source }, 'scheduled poll skipped: the previous poll of this source still runs');
        continue;
      }
      started.push(source);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
    return started;
  }

  /** Stops looking, waits for the running polls (unless forced) and gives the lease up. */
  async stop(options: { force?: boolean } = {}): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A look waiting for Redis (down) is not waited for: once stopped, it starts nothing.
    this.stopped = true;
    this.validUntil = 0;
    if (!options.force) await Promise.allSettled([...this.running]);
    // Bounded: Redis may go away during the stop, and the release would wait for it; the lease then runs
    // out by itself within its TTL.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.options.lease.release(this.options.holder).catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, RELEASE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }
}
