// Sub-planner: the progress deadline, from a no-progress window persisted in status (F1, F5).
import type { ProgressWindow } from './rollout-plan.ts';

export interface DeadlineInput {
  /** The revision that should be progressing. */
  hash: string;
  /** Available canary replicas the current step needs. */
  target: number;
  /** Available canary replicas that count as progress (restarted pods excluded). */
  available: number;
  /** spec.paused or a pause the rollout cannot leave by itself (inconclusive analysis): the clock stops. */
  paused: boolean;
  /** The window from the live status. */
  window?: ProgressWindow;
  /** progressDeadlineSeconds in milliseconds. */
  deadlineMs: number;
  now: Date;
}

export interface DeadlineResult {
  /** The window to persist. */
  window: ProgressWindow;
  exceeded: boolean;
  /** When the deadline expires, if the clock runs and it has not expired yet. */
  wakeAtMs?: number;
}

/**
 * The deadline clock runs while the canary has fewer available replicas than its step needs. Its window
 * starts afresh for a new revision, a new target, or after a pause (spec.paused, inconclusive analysis).
 *
 * Progress is the available count rising above the highest count seen in the window; it restarts the
 * window. Progress that does not stick — the count falls again sooner than one deadline later, as when a
 * crash-looping pod was Ready for a moment — is undone: the window that ran before it resumes, so pods
 * flapping Ready never extend the deadline. A loss after the count held for a full deadline starts a new
 * window instead.
 */
export function planDeadline(input: DeadlineInput): DeadlineResult {
  const nowMs = input.now.getTime();
  const nowIso = input.now.toISOString();
  const fresh: ProgressWindow = {
    since: nowIso,
    availableReplicas: input.available,
    podTemplateHash: input.hash,
    target: input.target,
  };
  const previous = input.window;
  const since = previous === undefined ? Number.NaN : Date.parse(previous.since);
  let window: ProgressWindow;
  if (
    previous === undefined ||
    Number.isNaN(since) ||
    previous.podTemplateHash !== input.hash ||
    previous.target !== input.target
  ) {
    window = fresh;
  } else if (input.paused) {
    window = previous.paused === true ? previous : { ...previous, paused: true };
  } else if (previous.paused === true) {
    window = fresh;
  } else if (input.available > previous.availableReplicas) {
    window = { ...fresh, previousSince: previous.since };
  } else if (input.available < previous.availableReplicas) {
    const undone = previous.previousSince !== undefined && nowMs - since < input.deadlineMs;
    window = undone ? { ...fresh, since: previous.previousSince as string } : fresh;
  } else {
    window = previous;
  }
  if (input.paused) window = window.paused === true ? window : { ...window, paused: true };
  const running = !input.paused && input.available < input.target;
  if (!running) return { window, exceeded: false };
  const expiresAt = Date.parse(window.since) + input.deadlineMs;
  if (nowMs >= expiresAt) return { window, exceeded: true };
  return { window, exceeded: false, wakeAtMs: expiresAt };
}
