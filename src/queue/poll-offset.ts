// Where in its interval a source's scheduled poll falls: spread by name, the same in every process.
import { createHash } from 'node:crypto';

/**
 * A stable offset in [0, intervalMs) for `source`'s scheduled polls (see PollTimetable). Polls fall on
 * multiples of the interval, so without one, 1,000 sources at 30 s all poll in the same instant: a burst
 * of 1,000 ref checks and state reads every 30 s instead of 33 a second. Derived from the name (never
 * random) so that every process agrees and a restart or a takeover does not move it.
 */
export function pollOffsetMs(source: string, intervalMs: number): number {
  if (!(intervalMs > 1)) return 0;
  const digest = createHash('sha256').update(source).digest();
  return digest.readUInt32BE(0) % Math.floor(intervalMs);
}
