// The one helper that manages status.conditions: set or remove, keep lastTransitionTime unless status changed.
import type { RolloutCondition } from '../manifest/rollout.ts';

/** The condition types Rollgate manages, in the order they are kept in status. */
export const CONDITION_TYPES = [
  'InvalidSpec',
  'Available',
  'Progressing',
  'Paused',
  'ReplicaFailure',
  'Completed',
  'Healthy',
] as const;
export type RolloutConditionType = (typeof CONDITION_TYPES)[number];

/** What a sub-planner wants a condition to say. */
export interface DesiredCondition {
  type: RolloutConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

function order(type: string): number {
  const index = (CONDITION_TYPES as readonly string[]).indexOf(type);
  return index === -1 ? CONDITION_TYPES.length : index;
}

function sorted(conditions: RolloutCondition[]): RolloutCondition[] {
  return [...conditions].sort(
    (a, b) => order(a.type) - order(b.type) || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0),
  );
}

/**
 * Returns the conditions with `desired` set. lastTransitionTime changes only when the status changes;
 * lastUpdateTime only when status, reason or message change, so a pass that changes nothing writes nothing.
 */
export function setCondition(
  conditions: readonly RolloutCondition[] | undefined,
  desired: DesiredCondition,
  now: Date,
): RolloutCondition[] {
  const stamp = now.toISOString();
  const existing = conditions?.find((condition) => condition.type === desired.type);
  const others = (conditions ?? []).filter((condition) => condition.type !== desired.type);
  const unchanged =
    existing !== undefined &&
    existing.status === desired.status &&
    existing.reason === desired.reason &&
    existing.message === desired.message;
  const next: RolloutCondition = {
    type: desired.type,
    status: desired.status,
    reason: desired.reason,
    message: desired.message,
    lastTransitionTime:
      existing !== undefined && existing.status === desired.status
        ? (existing.lastTransitionTime ?? stamp)
        : stamp,
    lastUpdateTime: unchanged ? (existing.lastUpdateTime ?? stamp) : stamp,
  };
  return sorted([...others, next]);
}

/** Returns the conditions without `type`. */
export function removeCondition(
  conditions: readonly RolloutCondition[] | undefined,
  type: RolloutConditionType,
): RolloutCondition[] {
  return sorted((conditions ?? []).filter((condition) => condition.type !== type));
}
