import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { waitUntil } from '../../../src/clock/wait-until.ts';

describe('waitUntil', () => {
  it('on a ManualClock, resolves only when an advance reaches the moment, never on real time', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let reached = false;
    const wait = waitUntil(clock, new Date(Date.UTC(2026, 0, 1, 0, 0, 10))).then(() => {
      reached = true;
    });
    clock.advance(9_000);
    await Promise.resolve();
    expect(reached).toBe(false);
    clock.advance(1_000);
    await wait;
    expect(reached).toBe(true);
  });

  it('resolves at once for a moment already past, on any clock', async () => {
    const clock = { now: () => new Date(Date.UTC(2026, 0, 2)) };
    await expect(waitUntil(clock, new Date(Date.UTC(2026, 0, 1)))).resolves.toBeUndefined();
  });
});
