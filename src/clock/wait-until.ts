// Waiting for a moment of a Clock: the clock's own way where it has one (a ManualClock moves when a test or the
// sandbox advances it), else a timer on real time.
import type { Clock } from './clock.ts';

/** Resolves once `clock` reads `until` or later. */
export function waitUntil(clock: Clock, until: Date): Promise<void> {
  const left = until.getTime() - clock.now().getTime();
  if (left <= 0) return Promise.resolve();
  if (clock.reach) return clock.reach(until);
  return new Promise((resolve) => setTimeout(resolve, left));
}
