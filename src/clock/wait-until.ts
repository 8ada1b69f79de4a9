// Waiting for a moment of a Clock: a timer on the system clock, the clock's own advances on a ManualClock (tests drive it).
import { ManualClock, type Clock } from './clock.ts';

/**
 * Resolves once `clock` reads `until` or later. On a ManualClock nothing happens until the test (or the
 * sandbox) advances it past `until`; on any other clock, a timer.
 */
export function waitUntil(clock: Clock, until: Date): Promise<void> {
  const left = until.getTime() - clock.now().getTime();
  if (left <= 0) return Promise.resolve();
  if (clock instanceof ManualClock)
    return new Promise((resolve) => {
      const stop = clock.onAdvance((now) => {
        if (now.getTime() < until.getTime()) return;
        stop();
        resolve();
      });
    });
  return new Promise((resolve) => setTimeout(resolve, left));
}
