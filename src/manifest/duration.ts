// Durations as Argo Rollouts writes them: Go-style strings ("30s", "1h30m", "250ms") or integer seconds.
import { DurationError } from './duration-error.ts';

export { DurationError } from './duration-error.ts';

const MS_PER_UNIT: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// One Go duration term: a decimal number (optional fraction) followed by a unit. Longest units first so
// "ms" is not read as "m" followed by garbage.
const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
const INTEGER_SECONDS = /^\d+$/;

/**
 * Parses a duration into milliseconds.
 *
 * Accepts what Argo Rollouts accepts: a non-negative integer number of seconds (as a number or a
 * string of digits, e.g. `30` or `"30"`), or a Go `time.ParseDuration` string made of one or more
 * `<number><unit>` terms with units ns, us/µs, ms, s, m, h (`"30s"`, `"5m"`, `"1h30m"`, `"1.5h"`, `"0"`).
 * Negative durations are refused: Rollgate only uses durations as waits and intervals.
 *
 * @throws DurationError naming the value and the reason.
 */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new DurationError(value, 'a number must be whole seconds');
    if (value < 0) throw new DurationError(value, 'must not be negative');
    return value * 1000;
  }
  if (typeof value !== 'string') throw new DurationError(value, 'must be a string or an integer');
  const text = value.trim();
  if (text === '') throw new DurationError(value, 'is empty');
  if (INTEGER_SECONDS.test(text)) return Number(text) * 1000;
  if (text.startsWith('-')) throw new DurationError(value, 'must not be negative');
  const body = text.startsWith('+') ? text.slice(1) : text;
  let total = 0;
  let at = 0;
  while (at < body.length) {
    TERM.lastIndex = at;
    const match = TERM.exec(body);
    if (match === null) {
      const rest = body.slice(at);
      const reason = /^\d+(?:\.\d*)?$/.test(rest)
        ? `missing unit after "${rest}" (use ms, s, m or h, e.g. "30s")`
        : `unexpected "${rest}" (expected e.g. "30s", "5m", "1h30m", "250ms" or integer seconds)`;
      throw new DurationError(value, reason);
    }
    const [, amount = '0', unit = 's'] = match;
    total += Number(amount) * (MS_PER_UNIT[unit] ?? 0);
    at = TERM.lastIndex;
  }
  if (!Number.isFinite(total)) throw new DurationError(value, 'is too large');
  return total;
}

/** True when {@link parseDuration} would accept the value. */
export function isDuration(value: unknown): value is string | number {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    parseDuration(value);
    return true;
  } catch {
    return false;
  }
}
