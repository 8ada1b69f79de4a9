// Auto-merge windows: cron-started allow/deny periods in a time zone, and whether (and when) a merge may happen.
import { CronExpressionParser } from 'cron-parser';

/**
 * One window: it opens at every time `schedule` (five cron fields, read in `timeZone`) fires and lasts
 * `durationMs`. A `deny` window forbids merging while it is open; once any `allow` window is configured,
 * merging happens only inside one. Deny wins over allow.
 */
export interface MergeWindow {
  kind: 'allow' | 'deny';
  schedule: string;
  durationMs: number;
  /** An IANA time zone (Intl); UTC when absent. */
  timeZone?: string;
}

/** Whether a merge may happen at a moment, and if not, why and from when it may. */
export type WindowVerdict =
  | { open: true }
  | {
      open: false;
      reason: string;
      /** The first moment (at or after the asked one) no deny window is open and, if any allow window exists, one is. */
      opensAt?: Date;
    };

/**
 * How far ahead the next open moment is looked for: a year and a bit covers any yearly freeze, and bounds
 * the work for windows that never close (a daily deny lasting 36 h).
 */
const HORIZON_MS = 400 * 24 * 3_600_000;
/** How many open/close edges that search follows at most. */
const MAX_STEPS = 500;

function fires(window: MergeWindow, from: Date) {
  return CronExpressionParser.parse(window.schedule, { currentDate: from, tz: window.timeZone ?? 'UTC' });
}

/**
 * When `window` is open at `at`, the moment it closes (overlapping occurrences are followed, so a window
 * that reopens before it closes counts as one); otherwise undefined.
 */
export function openUntil(window: MergeWindow, at: Date): Date | undefined {
  // The latest occurrence at or before `at` (cron-parser's prev() is strictly before, so look from a ms later).
  const started = fires(window, new Date(at.getTime() + 1))
    .prev()
    .getTime();
  let end = started + window.durationMs;
  if (end <= at.getTime()) return undefined;
  const later = fires(window, new Date(started));
  const horizon = at.getTime() + HORIZON_MS;
  while (end <= horizon) {
    const next = later.next().getTime();
    if (next > end) break;
    end = Math.max(end, next + window.durationMs);
  }
  return new Date(end);
}

/** The next time `window` opens after `at`. */
function nextOpening(window: MergeWindow, at: Date): Date {
  return fires(window, at).next().toDate();
}

function describe(window: MergeWindow): string {
  const zone = window.timeZone ?? 'UTC';
  return `${window.kind} window "${window.schedule}" (${formatDuration(window.durationMs)}, ${zone})`;
}

/** Whether merging is allowed at `at`, with the reason and the moment it will be when it is not. */
export function windowVerdict(windows: readonly MergeWindow[], at: Date): WindowVerdict {
  const first = blockedAt(windows, at);
  if (first === undefined) return { open: true };
  let when = first.retryAt;
  const horizon = at.getTime() + HORIZON_MS;
  for (let step = 0; step < MAX_STEPS && when.getTime() <= horizon; step++) {
    const blocked = blockedAt(windows, when);
    if (blocked === undefined) return { open: false, reason: first.reason, opensAt: when };
    when = blocked.retryAt;
  }
  return { open: false, reason: first.reason };
}

/** Why merging is blocked at `at` and the earliest moment that could change, or undefined when it is not. */
function blockedAt(windows: readonly MergeWindow[], at: Date): { reason: string; retryAt: Date } | undefined {
  const denying = windows
    .filter((window) => window.kind === 'deny')
    .flatMap((window) => {
      const until = openUntil(window, at);
      return until === undefined ? [] : [{ window, until }];
    });
  if (denying.length > 0) {
    const last = denying.reduce((a, b) => (b.until > a.until ? b : a));
    return { reason: `inside the ${describe(last.window)}`, retryAt: last.until };
  }
  const allows = windows.filter((window) => window.kind === 'allow');
  if (allows.length === 0 || allows.some((window) => openUntil(window, at) !== undefined)) return undefined;
  const opening = allows
    .map((window) => ({ window, at: nextOpening(window, at) }))
    .reduce((a, b) => (b.at < a.at ? b : a));
  const names = allows.map((window) => `"${window.schedule}"`).join(', ');
  return { reason: `outside every allow window (${names})`, retryAt: opening.at };
}

/** A duration as a user wrote it, roughly: 64h, 30m, 45s. */
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.round(ms / 1000)}s`;
}

/** A moment in a time zone, for a person (`2026-12-07 09:00 Europe/Paris`). */
export function formatIn(at: Date, timeZone = 'UTC'): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${timeZone}`;
}
