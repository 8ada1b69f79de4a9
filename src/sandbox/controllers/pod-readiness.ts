// Reading a pod's readiness and availability from its status, the way the workload controllers do.

import type { KubeObject } from './kube-object.ts';
import { isPlainObject } from './kube-object.ts';
import { parseKubeTime } from './kube-time.ts';

function readyCondition(pod: KubeObject): Record<string, unknown> | undefined {
  const conditions = pod.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  return conditions.filter(isPlainObject).find((condition) => condition.type === 'Ready');
}

/** True when the pod's Ready condition is True. */
export function isPodReady(pod: KubeObject): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** When the pod became Ready (its Ready condition's lastTransitionTime), if it is Ready. */
export function podReadySince(pod: KubeObject): number | undefined {
  const condition = readyCondition(pod);
  if (condition?.status !== 'True') return undefined;
  return parseKubeTime(condition.lastTransitionTime);
}

/** When a Ready pod counts as available: Ready since at least minReadySeconds. */
export function podAvailableAt(pod: KubeObject, minReadySeconds: number): number | undefined {
  const since = podReadySince(pod);
  if (since === undefined) return isPodReady(pod) ? 0 : undefined;
  return since + Math.max(0, minReadySeconds) * 1000;
}

/** Ready for at least minReadySeconds at `now` (minReadySeconds 0: Ready is enough). */
export function isPodAvailable(pod: KubeObject, minReadySeconds: number, now: Date): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const at = podAvailableAt(pod, minReadySeconds);
  return at !== undefined && at <= now.getTime();
}

/** The pod's phase, `Pending` when unreported. */
export function podPhase(pod: KubeObject): string {
  return typeof pod.status?.phase === 'string' ? pod.status.phase : 'Pending';
}

/** Counted by controllers: not being deleted and not finished (Succeeded/Failed). */
export function isPodActive(pod: KubeObject): boolean {
  const phase = podPhase(pod);
  return pod.metadata.deletionTimestamp === undefined && phase !== 'Succeeded' && phase !== 'Failed';
}

/** Sum of the pod's container restart counts. */
export function podRestartCount(pod: KubeObject): number {
  const statuses = pod.status?.containerStatuses;
  if (!Array.isArray(statuses)) return 0;
  return statuses
    .filter(isPlainObject)
    .reduce((sum, status) => sum + (typeof status.restartCount === 'number' ? status.restartCount : 0), 0);
}
