// Sub-planner: old ReplicaSets — scale-down deadlines (written with the scale), the F3 sweep, history limit.
import type { ObservedReplicaSet } from './observed-state.ts';
import { revisionNumberOf } from './plan-revision.ts';
import {
  SCALE_DOWN_DEADLINE_ANNOTATION,
  type DeleteReplicaSetAction,
  type EmitEventAction,
  type ScaleReplicaSetAction,
} from './rollout-action.ts';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch for a well-formed RFC 3339 timestamp, else undefined. */
export function parseDeadline(value: string | undefined): number | undefined {
  if (value === undefined || !RFC3339.test(value.trim())) return undefined;
  const ms = Date.parse(value.trim());
  return Number.isNaN(ms) ? undefined : ms;
}

/** Thrown when the planner is about to emit an annotation value that is empty or not RFC 3339 (never expected). */
export class InvalidAnnotationValueError extends Error {
  override readonly name = 'InvalidAnnotationValueError';
  readonly code = 'rollgate.rollout.invalid-annotation-value';
  constructor(
    readonly replicaSet: string,
    readonly value: string,
  ) {
    super(
      `refusing to write ${SCALE_DOWN_DEADLINE_ANNOTATION}=${JSON.stringify(value)} on ReplicaSet ${replicaSet}`,
    );
  }
}

/** The deadline value `atMs` as RFC 3339, validated before it can reach a write. */
export function deadlineValue(replicaSet: string, atMs: number): string {
  const value = Number.isFinite(atMs) ? new Date(atMs).toISOString() : '';
  if (parseDeadline(value) === undefined) throw new InvalidAnnotationValueError(replicaSet, value);
  return value;
}

/** Asserts that no scale action carries an empty or malformed deadline annotation. */
export function assertDeadlineAnnotations(actions: readonly { kind: string }[]): void {
  for (const action of actions) {
    if (action.kind !== 'scaleReplicaSet') continue;
    const scale = action as ScaleReplicaSetAction;
    const value = scale.annotations?.[SCALE_DOWN_DEADLINE_ANNOTATION];
    if (value !== undefined && value !== null && parseDeadline(value) === undefined) {
      throw new InvalidAnnotationValueError(scale.name, value);
    }
  }
}

/** An old ReplicaSet (neither stable nor current) and what its deadline says. */
export interface OldReplicaSet {
  rs: ObservedReplicaSet;
  /** Its pods may be removed now (deadline passed, or missing/invalid and so treated as expired). */
  due: boolean;
  /** Has pods but no valid deadline: the sweep repairs it (F3). */
  repair: boolean;
  /** When a future deadline passes. */
  wakeAtMs?: number;
  /**
   * A previous stable waiting for (or past) its delayed scale-down, not a superseded canary: no route sends
   * it canary traffic, so a new canary need not hold at weight 0 while it goes.
   */
  previousStable: boolean;
}

/**
 * Whether `rs` came before `stable`: by their revision numbers, which are unique and in creation order
 * (a rolled-back-to template is renumbered as the newest); by creation time only where one lacks a
 * number. Creation times have whole seconds: two revisions created within one second tie, and a previous
 * stable taken for a superseded canary would hold the canary at weight 0 while its pods go.
 */
function olderThan(
  rs: Pick<ObservedReplicaSet, 'creationTimestamp' | 'annotations'>,
  stable: Pick<ObservedReplicaSet, 'creationTimestamp' | 'annotations'>,
): boolean {
  const own = revisionNumberOf(rs);
  const stables = revisionNumberOf(stable);
  if (own > 0 && stables > 0) return own < stables;
  return Date.parse(rs.creationTimestamp) < Date.parse(stable.creationTimestamp);
}

/**
 * Classifies old ReplicaSets. One with pods and a valid future deadline waits for it; a passed deadline is
 * due; a missing, empty or unparsable one is due and repaired (its write sets a valid, already passed
 * deadline and a Warning event says so), except for `quiet` hashes (a just-superseded canary: its scale-down
 * is announced by the supersede event instead).
 */
export function classifyOldReplicaSets(
  others: readonly ObservedReplicaSet[],
  now: Date,
  quiet: ReadonlySet<string>,
  /** The stable ReplicaSet, when there is one. */
  stable?: Pick<ObservedReplicaSet, 'creationTimestamp' | 'annotations'>,
): OldReplicaSet[] {
  return others.map((rs) => {
    const deadline = parseDeadline(rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]);
    if (rs.replicas === 0) return { rs, due: false, repair: false, previousStable: false };
    if (deadline === undefined)
      return { rs, due: true, repair: !quiet.has(rs.podTemplateHash), previousStable: false };
    // Dated and older than the stable: a stable before it (a canary completes only once every superseded
    // one has drained). A superseded canary is dated too once partly drained, but it is newer than the
    // stable or, rolled back to, a quiet hash.
    const previousStable = !quiet.has(rs.podTemplateHash) && stable !== undefined && olderThan(rs, stable);
    if (deadline <= now.getTime()) return { rs, due: true, repair: false, previousStable };
    return { rs, due: false, repair: false, wakeAtMs: deadline, previousStable };
  });
}

/**
 * canary.scaleDownDelayRevisionLimit: at most `limit` old ReplicaSets keep their pods while their scale-down
 * delay runs (the newest ones, by creation); the older ones waiting are due at once. Without a limit,
 * `old` is returned as it is.
 */
export function withScaleDownRevisionLimit(
  old: readonly OldReplicaSet[],
  limit: number | undefined,
): OldReplicaSet[] {
  if (limit === undefined) return [...old];
  const waiting = old
    .filter((entry) => !entry.due && entry.rs.replicas > 0)
    .sort((a, b) => Date.parse(b.rs.creationTimestamp) - Date.parse(a.rs.creationTimestamp));
  const beyond = new Set(waiting.slice(Math.max(0, limit)).map((entry) => entry.rs.name));
  return old.map((entry) => {
    if (!beyond.has(entry.rs.name)) return entry;
    const { wakeAtMs: _wake, ...rest } = entry;
    return { ...rest, due: true };
  });
}

/**
 * The writes for old ReplicaSets given their next replica counts: the scale and the annotation in one
 * write — removed when reaching 0, set to `now` (expired) when repairing or marking an undated scale-down.
 */
export function oldReplicaSetWrites(
  old: readonly OldReplicaSet[],
  next: readonly number[],
  now: Date,
): { actions: ScaleReplicaSetAction[]; events: EmitEventAction[] } {
  const actions: ScaleReplicaSetAction[] = [];
  const events: EmitEventAction[] = [];
  old.forEach((entry, index) => {
    const target = next[index] ?? entry.rs.replicas;
    const hasAnnotation = SCALE_DOWN_DEADLINE_ANNOTATION in entry.rs.annotations;
    const valid = parseDeadline(entry.rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]) !== undefined;
    if (!entry.due) return;
    if (entry.repair) {
      const value = entry.rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION];
      events.push({
        kind: 'emitEvent',
        type: 'Warning',
        reason: 'ScaleDownDeadlineRepaired',
        message: `ReplicaSet ${entry.rs.name} had pods and ${
          value === undefined ? 'no' : `an invalid (${JSON.stringify(value)})`
        } ${SCALE_DOWN_DEADLINE_ANNOTATION}: treated as expired, scaling to ${target}`,
      });
    }
    if (target === entry.rs.replicas && valid) return;
    const annotations: Record<string, string | null> = {};
    if (target === 0) {
      if (hasAnnotation) annotations[SCALE_DOWN_DEADLINE_ANNOTATION] = null;
    } else if (!valid) {
      annotations[SCALE_DOWN_DEADLINE_ANNOTATION] = deadlineValue(entry.rs.name, now.getTime());
    }
    actions.push({
      kind: 'scaleReplicaSet',
      name: entry.rs.name,
      resourceVersion: entry.rs.resourceVersion,
      replicas: target,
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    });
  });
  return { actions, events };
}

/**
 * Deletes old ReplicaSets beyond revisionHistoryLimit: only ones owned by the rollout, scaled to 0 with no
 * pods left; the newest `limit` are kept.
 */
export function planRevisionHistory(
  others: readonly ObservedReplicaSet[],
  limit: number,
): DeleteReplicaSetAction[] {
  const idle = others
    .filter((rs) => rs.controlledByRollout && rs.replicas === 0 && rs.status.replicas === 0)
    .sort((a, b) =>
      a.creationTimestamp < b.creationTimestamp ? 1 : a.creationTimestamp > b.creationTimestamp ? -1 : 0,
    );
  return idle.slice(Math.max(0, limit)).map((rs) => ({
    kind: 'deleteReplicaSet',
    name: rs.name,
    resourceVersion: rs.resourceVersion,
  }));
}
