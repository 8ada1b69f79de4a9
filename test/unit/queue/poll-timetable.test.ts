// The scheduled polls' timetable: each source once per interval, spread over it, on one grid for all processes.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { nextPollAt, PollTimetable } from '../../../src/queue/poll-timetable.ts';

const start = Date.UTC(2026, 0, 1, 12, 0, 0);

/** Every source polled between `from` (exclusive) and `to`, looking every `stepMs`, with its times. */
function run(timetable: PollTimetable, clock: ManualClock, durationMs: number, stepMs = 100) {
  const polls = new Map<string, number[]>();
  for (let t = 0; t < durationMs; t += stepMs) {
    const now = clock.advance(stepMs).getTime();
    for (const source of timetable.due(now)) polls.set(source, [...(polls.get(source) ?? []), now]);
  }
  return polls;
}

describe('PollTimetable', () => {
  it('polls each source once per interval, spread over the interval rather than all at once', () => {
    const clock = new ManualClock(start);
    const sources = Array.from({ length: 1000 }, (_, i) => ({ source: `s-${i}`, intervalMs: 30_000 }));
    const timetable = new PollTimetable(sources, clock.now().getTime());
    const polls = run(timetable, clock, 90_000);
    // Three intervals: every source three times, 30 s apart.
    expect(polls.size).toBe(1000);
    for (const times of polls.values()) {
      expect(times).toHaveLength(3);
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(30_000 - 100);
      expect(times[1]! - times[0]!).toBeLessThanOrEqual(30_000 + 100);
    }
    // Per second of the interval: about 33; no second holds a burst.
    const perSecond = new Array<number>(30).fill(0);
    for (const times of polls.values()) {
      const second = Math.floor(((times[0]! - start) % 30_000) / 1000);
      perSecond[second] = (perSecond[second] ?? 0) + 1;
    }
    expect(Math.max(...perSecond)).toBeLessThanOrEqual(70);
    expect(Math.min(...perSecond)).toBeGreaterThanOrEqual(10);
  });

  it('keeps every source at its place when another process takes over, and does not catch up missed polls', () => {
    const clock = new ManualClock(start);
    const sources = Array.from({ length: 50 }, (_, i) => ({ source: `s-${i}`, intervalMs: 10_000 }));
    const first = new PollTimetable(sources, clock.now().getTime());
    const before = run(first, clock, 10_000);
    // The first process dies; 25 s later another one starts and takes over.
    clock.advance(25_000);
    const second = new PollTimetable(sources, clock.now().getTime());
    expect(second.due(clock.now().getTime())).toEqual([]);
    const after = run(second, clock, 10_000);
    for (const [source, [firstAt]] of before) {
      const [nextAt] = after.get(source)!;
      expect((nextAt! - firstAt!) % 10_000).toBeLessThanOrEqual(100);
    }
    // The same when one timetable stops polling for a while (the lease was elsewhere) and restarts.
    clock.advance(42_000);
    first.restart(clock.now().getTime());
    expect(first.due(clock.now().getTime())).toEqual([]);
  });

  it('places a poll on the grid of its interval, whatever the time it is asked from', () => {
    const schedule = { source: 'apps', intervalMs: 30_000 };
    const at = nextPollAt(schedule, start);
    expect(at).toBeGreaterThan(start);
    expect(at - start).toBeLessThanOrEqual(30_000);
    expect(nextPollAt(schedule, at - 1)).toBe(at);
    expect(nextPollAt(schedule, at)).toBe(at + 30_000);
    expect(() => nextPollAt({ source: 'apps', intervalMs: 0 }, start)).toThrow(RangeError);
  });
});
