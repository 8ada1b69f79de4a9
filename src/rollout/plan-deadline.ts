// Sub-planner: the progress deadline, from a no-progress window persisted in status (F1, F5).
import type { ProgressWindow } from './rollout-plan.ts';

export interface DeadlineInput {
  /** The revision that should be progressing. */
  hash: string;
  /** The canary still has to gain available replicas to reach its target. */
  expectingProgress: boolean;
  /** Paused (spec.paused or a pause condition): the clock does not run. */
  paused: boolean;
  /** Available canary replicas that count as progress (restarted pods excluded). */
  available: number;
  /** The window from the live status. */
  window?: ProgressWindow;
  /** progressDeadlineSeconds in milliseconds. */
  deadlineMs: number;
  now: Date;
}

export interface DeadlineResult {
  /** The window to persist (absent while nothing is expected to progress or while paused). */
  window?: ProgressWindow;
  exceeded: boolean;
  /** When the deadline expires, if it has not yet. */
  wakeAtMs?: number;
}

/**
 * Progress is the canary's available count rising above the highest count seen in the window; only then
 * does the window restart, so pods flapping Ready never extend the deadline. A new revision starts a new
 * window. While paused, or once nothing is expected to progress, the window is dropped; it starts afresh
 * (from `now`) when progress is expected again.
 */
export function planDeadline(input: DeadlineInput): DeadlineResult {
  if (!input.expectingProgress || input.paused) return { exceeded: false };
  const nowIso = input.now.toISOString();
  const previous = input.window;
  const since = previous === undefined ? Number.NaN : Date.parse(previous.since);
  let window: ProgressWindow;
  if (previous === undefined || previous.podTemplateHash !== input.hash || Number.isNaN(since)) {
    window = { since: nowIso, availableReplicas: input.available, podTemplateHash: input.hash };
  } else if (input.available > previous.availableReplicas) {
    window = { since: nowIso, availableReplicas: input.available, podTemplateHash: input.hash };
  } else {
    window = previous;
  }
  const expiresAt = Date.parse(window.since) + input.deadlineMs;
  if (input.now.getTime() >= expiresAt) return { window, exceeded: true };
  return { window, exceeded: false, wakeAtMs: expiresAt };
}
