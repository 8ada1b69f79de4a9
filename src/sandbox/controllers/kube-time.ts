// Kubernetes timestamps: RFC 3339 with second precision (metav1.Time), and Go-style durations in messages.
import { DurationError, parseDuration } from '../../manifest/duration.ts';

/** Formats a time as the API server serializes metav1.Time, e.g. `2026-01-01T00:00:05Z`. */
export function formatKubeTime(time: Date | number): string {
  const date = typeof time === 'number' ? new Date(time) : time;
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** Parses a Kubernetes timestamp to epoch milliseconds; undefined when absent or malformed. */
export function parseKubeTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Formats milliseconds as Go's time.Duration.String() does for whole seconds: `10s`, `1m20s`, `5m0s`. */
export function formatGoDuration(ms: number): string {
  const totalSeconds = Math.round(ms / 1000);
  if (totalSeconds < 60) return `${totalSeconds}s`;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours}h${minutes}m${seconds}s` : `${minutes}m${seconds}s`;
}

/**
 * Parses a duration annotation such as `20s`, `1m30s`, `1500ms` or `45` (seconds) with the project's
 * duration parser, to whole milliseconds; undefined when absent or not a duration.
 */
export function parseDurationMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    return Math.round(parseDuration(value));
  } catch (err) {
    if (err instanceof DurationError) return undefined;
    throw err;
  }
}
