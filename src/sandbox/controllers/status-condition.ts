// Setting one condition in a status conditions list, keeping lastTransitionTime unless the status changed.

import { isPlainObject } from './kube-object.ts';
import { formatKubeTime } from './kube-time.ts';

/** A workload condition as apps/v1 and batch/v1 serve it. */
export interface WorkloadCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

/** The previous conditions list as plain objects (ignoring junk). */
export function readConditions(status: Record<string, unknown> | undefined): Array<Record<string, unknown>> {
  const list = status?.conditions;
  return Array.isArray(list) ? list.filter(isPlainObject).map((condition) => ({ ...condition })) : [];
}

/**
 * Returns the list with `condition` set: an identical condition is kept as is; lastTransitionTime stays
 * when only reason or message changed, otherwise it becomes `now`. `stamp` names extra time fields to set to now (e.g. lastProbeTime).
 */
export function setCondition(
  conditions: Array<Record<string, unknown>>,
  condition: WorkloadCondition,
  now: Date,
  stamp: string[] = [],
): Array<Record<string, unknown>> {
  const previous = conditions.find((existing) => existing.type === condition.type);
  // An unchanged condition is left exactly as it was, so repeated passes write nothing.
  if (
    previous !== undefined &&
    previous.status === condition.status &&
    previous.reason === condition.reason &&
    previous.message === condition.message
  )
    return conditions;
  const transition =
    previous !== undefined &&
    previous.status === condition.status &&
    typeof previous.lastTransitionTime === 'string'
      ? previous.lastTransitionTime
      : formatKubeTime(now);
  const next: Record<string, unknown> = { type: condition.type, status: condition.status };
  for (const field of stamp) next[field] = formatKubeTime(now);
  next.lastTransitionTime = transition;
  if (condition.reason !== undefined) next.reason = condition.reason;
  if (condition.message !== undefined) next.message = condition.message;
  return previous === undefined
    ? [...conditions, next]
    : conditions.map((existing) => (existing === previous ? next : existing));
}

/** Returns the list without a condition of that type. */
export function removeCondition(
  conditions: Array<Record<string, unknown>>,
  type: string,
): Array<Record<string, unknown>> {
  return conditions.filter((condition) => condition.type !== type);
}
