// When each source's scheduled poll falls: every interval, at the source's own offset, on one grid for all processes.
import { pollOffsetMs } from './poll-offset.ts';
import type { PollSchedule } from './poll-queue.ts';

/**
 * The first time after `afterMs` (epoch ms) at which `schedule`'s poll falls: a multiple of its
 * interval plus its offset ({@link pollOffsetMs}). The grid depends only on the name and the
 * interval, so a process that takes the polls over keeps every source where it was (no burst).
 */
export function nextPollAt(schedule: PollSchedule, afterMs: number): number {
  const { intervalMs } = schedule;
  if (!(intervalMs > 0)) throw new RangeError(`poll interval of ${schedule.source} must be > 0`);
  const offset = pollOffsetMs(schedule.source, intervalMs);
  const slots = Math.floor((afterMs - offset) / intervalMs) + 1;
  return slots * intervalMs + offset;
}

/**
 * The scheduled polls of a set of sources, decided from the time it is given (no timers): `due(now)`
 * returns the sources whose poll time has come since the last call and moves each to its next one.
 * A source whose time passed several times over (the process was paused, or just took the polls over)
 * is polled once, not once per missed time.
 */
export class PollTimetable {
  private readonly schedules = new Map<string, PollSchedule>();
  private readonly nextAt = new Map<string, number>();

  /** `nowMs`: polls start after this time (the first is each source's next grid time). */
  constructor(schedules: readonly PollSchedule[], nowMs: number) {
    for (const schedule of schedules) {
      this.schedules.set(schedule.source, schedule);
      this.nextAt.set(schedule.source, nextPollAt(schedule, nowMs));
    }
  }

  /** Starts every source over from `nowMs` (the polls were not ours for a while): none is due at once. */
  restart(nowMs: number): void {
    for (const schedule of this.schedules.values())
      this.nextAt.set(schedule.source, nextPollAt(schedule, nowMs));
  }

  /** Adds a source, or changes its interval: its next poll is its next grid time after `nowMs`. */
  set(schedule: PollSchedule, nowMs: number): void {
    this.schedules.set(schedule.source, schedule);
    this.nextAt.set(schedule.source, nextPollAt(schedule, nowMs));
  }

  /** Drops a source: it is never due again. */
  delete(source: string): void {
    this.schedules.delete(source);
    this.nextAt.delete(source);
  }

  /** How many sources it schedules. */
  get size(): number {
    return this.schedules.size;
  }

  /** The sources due at `nowMs`, each moved to its next time after `nowMs`. */
  due(nowMs: number): string[] {
    const due: string[] = [];
    for (const [source, at] of this.nextAt) {
      if (at > nowMs) continue;
      due.push(source);
      const schedule = this.schedules.get(source);
      if (schedule) this.nextAt.set(source, nextPollAt(schedule, nowMs));
    }
    return due;
  }
}
