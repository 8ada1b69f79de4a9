// Kubernetes timestamps: RFC 3339 with second precision (metav1.Time), and Go-style durations in messages.

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

const durationPart = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Parses a duration annotation such as `20s`, `1m30s`, `1500ms`; undefined when it is not one. */
export function parseDurationMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  let total = 0;
  let consumed = 0;
  for (const match of text.matchAll(durationPart)) {
    if (match.index !== consumed) return undefined;
    consumed += match[0].length;
    const amount = Number(match[1]);
    const unit = match[2];
    total += amount * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000);
  }
  return consumed === text.length ? Math.round(total) : undefined;
}
