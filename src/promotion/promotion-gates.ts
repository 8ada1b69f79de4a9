// Promotion gates: how long a revision soaks before its pull request, and what auto-merge waits for.
import type { RolloutStatus } from '../manifest/rollout.ts';
import { formatDuration, formatIn, windowVerdict, type MergeWindow } from './merge-window.ts';

/** The gates of one promotion (config `promotions[].gates`), durations in milliseconds. */
export interface PromotionGates {
  /** The revision stays Healthy in the `from` source this long after its canary finished before a pull request. */
  soakMs?: number;
  /** Auto-merge merges only when these allow it. */
  windows?: MergeWindow[];
  /**
   * Auto-merge merges only a pull request that carries `label` (put there by a person) and, with `review`,
   * that someone approves in a review (the forge's own approval: docs/promotion.md, "Gates").
   */
  requireApproval?: { label?: string; review?: boolean };
}

/** The soak of a promotable revision: passed, or the moment it will have. */
export type SoakVerdict = { passed: true } | { passed: false; reason: string; retryAfterMs: number };

/**
 * When the Rollout became Healthy: the `Healthy` condition's lastTransitionTime while it is True. It turns
 * False while a new revision rolls out and whenever the revision degrades, so its time is when the current
 * Healthy stretch began, and a degradation restarts the soak.
 */
export function healthySince(status: RolloutStatus): Date | undefined {
  const condition = status.conditions?.find((c) => c.type === 'Healthy');
  if (condition?.status !== 'True' || condition.lastTransitionTime === undefined) return undefined;
  const at = new Date(condition.lastTransitionTime);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** Has the revision `hash` stayed Healthy for `soakMs` at `now`? */
export function soakVerdict(status: RolloutStatus, hash: string, soakMs: number, now: Date): SoakVerdict {
  const since = healthySince(status);
  if (since === undefined)
    return {
      passed: false,
      reason: `revision ${hash} soaks ${formatDuration(soakMs)}: no Healthy condition time to count from yet`,
      retryAfterMs: soakMs,
    };
  const left = since.getTime() + soakMs - now.getTime();
  if (left <= 0) return { passed: true };
  const until = new Date(since.getTime() + soakMs);
  return {
    passed: false,
    reason: `revision ${hash} soaks ${formatDuration(soakMs)} (Healthy since ${since.toISOString()}); pull request at ${until.toISOString()}`,
    retryAfterMs: left,
  };
}

const NO_OPENING_RETRY_MS = 3_600_000;

/** What auto-merge waits for besides the checks, one at a time. */
export type MergeGateVerdict =
  | { allowed: true }
  | {
      allowed: false;
      /** Stable while the situation is the same, so the pull request is told once. */
      key: string;
      /** For the pull request comment: why it waits and when it will merge. */
      note: string;
      /** For logs and `rollgate promotions`. */
      reason: string;
      retryAfterMs?: number;
    };

/** What the gates read of the open pull request: its labels and who approves it in a review. */
export interface GatedPullRequest {
  labels: readonly string[];
  /** Read only when an approving review is required; absent otherwise. */
  approvedBy?: readonly string[];
}

/** May auto-merge merge `pullRequest` at `now`? Approval first (label, then review), then the windows. */
export function mergeGateVerdict(
  gates: PromotionGates | undefined,
  pullRequest: GatedPullRequest,
  now: Date,
): MergeGateVerdict {
  const { labels } = pullRequest;
  const label = gates?.requireApproval?.label;
  if (label !== undefined && !labels.includes(label))
    return {
      allowed: false,
      key: `approval:${label}`,
      reason: `waits for the approval label "${label}"`,
      note: `Auto-merge waits for approval: add the label \`${label}\` to this pull request and it merges once its checks pass.`,
    };
  if (gates?.requireApproval?.review === true && (pullRequest.approvedBy ?? []).length === 0)
    return {
      allowed: false,
      key: 'approval:review',
      reason: 'waits for an approving review',
      note: 'Auto-merge waits for approval: approve this pull request in a review and it merges once its checks pass.',
    };
  const windows = gates?.windows ?? [];
  if (windows.length === 0) return { allowed: true };
  const verdict = windowVerdict(windows, now);
  if (verdict.open) return { allowed: true };
  const zone = windows.find((w) => w.timeZone !== undefined)?.timeZone ?? 'UTC';
  const when =
    verdict.opensAt === undefined
      ? 'no allowed moment was found in the coming windows'
      : `it will merge from ${formatIn(verdict.opensAt, zone)} (${verdict.opensAt.toISOString()}) once its checks pass`;
  return {
    allowed: false,
    key: `window:${verdict.opensAt?.toISOString() ?? 'never'}`,
    reason: `merge window closed: ${verdict.reason}`,
    note: `Auto-merge waits: ${verdict.reason}; ${when}.`,
    // No open moment within the horizon (a deny that never closes): look again in an hour, not every interval.
    retryAfterMs:
      verdict.opensAt === undefined
        ? NO_OPENING_RETRY_MS
        : Math.max(1000, verdict.opensAt.getTime() - now.getTime()),
  };
}
