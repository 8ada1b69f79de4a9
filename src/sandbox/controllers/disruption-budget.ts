// The simulated disruption controller: a policy/v1 PodDisruptionBudget's status from the pods it selects.

import { selectorFromObject } from '../selectors/label-selector.ts';
import type { KubeObject } from './kube-object.ts';
import { isPlainObject } from './kube-object.ts';
import { formatKubeTime, parseKubeTime } from './kube-time.ts';
import { isPodReady } from './pod-readiness.ts';

/**
 * How long an eviction's entry in status.disruptedPods keeps a pod out of currentHealthy when the
 * pod is not seen terminating (the disruption controller's DeletionTimeout).
 */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

/** The condition type the disruption controller and the eviction subresource keep on a PDB. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';

/** The counts of a PDB's status, as the controller and the eviction subresource compute them. */
export interface DisruptionBudgetCounts {
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  disruptionsAllowed: number;
}

/** One disruption-controller pass over one PDB: its new status and when it will change by itself. */
export interface DisruptionBudgetPlan extends DisruptionBudgetCounts {
  status: Record<string, unknown>;
  /** When an entry of status.disruptedPods expires (the pod then counts as healthy again). */
  nextChangeAt?: Date;
}

/** A spec value the controller cannot scale (the API server's validation keeps these out). */
export class DisruptionBudgetSpecError extends Error {
  override readonly name = 'DisruptionBudgetSpecError';
  readonly code = 'sandbox.pdb.invalid-spec';
  constructor(
    readonly field: string,
    readonly value: unknown,
  ) {
    super(
      `invalid value for IntOrString: invalid type: string is not a percentage (${field}: ${String(value)})`,
    );
  }
}

const PERCENT = /^([0-9]+)%$/;

/**
 * intstr.GetScaledValueFromIntOrPercent: an int as is, `N%` of `total` rounded up or down.
 * PDBs always round up (for minAvailable and maxUnavailable alike).
 */
export function scaledIntOrPercent(value: unknown, total: number, roundUp: boolean, field: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const match = typeof value === 'string' ? PERCENT.exec(value) : null;
  if (!match) throw new DisruptionBudgetSpecError(field, value);
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

function spec(pdb: KubeObject): Record<string, unknown> {
  return isPlainObject(pdb.spec) ? pdb.spec : {};
}

/**
 * Which pods the disruption controller counts: those of the PDB's namespace matching spec.selector.
 * A missing selector selects nothing; an empty one (`{}`) every pod, as policy/v1 documents.
 */
export function budgetSelects(pdb: KubeObject, pod: KubeObject): boolean {
  const selector = spec(pdb).selector;
  if (!isPlainObject(selector)) return false;
  if (pod.metadata.namespace !== pdb.metadata.namespace) return false;
  return selectorFromObject(selector).matches(pod.metadata.labels ?? {});
}

/**
 * Which PDBs the eviction subresource checks for a pod: like budgetSelects, except that an empty
 * selector matches nothing there (kube-apiserver's eviction handler skips PDBs whose selector is empty).
 */
export function evictionBudgetSelects(pdb: KubeObject, pod: KubeObject): boolean {
  const selector = spec(pdb).selector;
  if (!isPlainObject(selector)) return false;
  const labels = isPlainObject(selector.matchLabels) ? Object.keys(selector.matchLabels) : [];
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  if (labels.length === 0 && expressions.length === 0) return false;
  return budgetSelects(pdb, pod);
}

/**
 * Expected pods for a percentage or maxUnavailable: the sum of spec.replicas of the ReplicaSets
 * controlling the pods, each counted once. A pod without such a ReplicaSet counts as one (the real
 * controller asks its controller's scale, and leaves unmanaged pods out with a warning event).
 */
function expectedScale(pods: KubeObject[], replicaSets: KubeObject[]): number {
  const seen = new Set<string>();
  let expected = 0;
  for (const pod of pods) {
    const ref = (pod.metadata.ownerReferences ?? []).find((r) => r.controller === true);
    const owner =
      ref?.kind === 'ReplicaSet'
        ? replicaSets.find(
            (rs) => rs.metadata.uid === ref.uid && rs.metadata.namespace === pod.metadata.namespace,
          )
        : undefined;
    if (!ref || !owner) {
      expected += 1;
      continue;
    }
    if (seen.has(ref.uid)) continue;
    seen.add(ref.uid);
    const replicas = isPlainObject(owner.spec) ? owner.spec.replicas : undefined;
    expected += typeof replicas === 'number' ? replicas : 1;
  }
  return expected;
}

/** getExpectedPodCount: (expectedPods, desiredHealthy) for the PDB's minAvailable or maxUnavailable. */
function expectedAndDesired(
  pdb: KubeObject,
  pods: KubeObject[],
  replicaSets: KubeObject[],
): { expectedPods: number; desiredHealthy: number } {
  const { minAvailable, maxUnavailable } = spec(pdb);
  if (maxUnavailable !== undefined && maxUnavailable !== null) {
    const expectedPods = expectedScale(pods, replicaSets);
    const unavailable = scaledIntOrPercent(maxUnavailable, expectedPods, true, 'spec.maxUnavailable');
    return { expectedPods, desiredHealthy: Math.max(0, expectedPods - unavailable) };
  }
  if (typeof minAvailable === 'number') return { expectedPods: pods.length, desiredHealthy: minAvailable };
  if (minAvailable !== undefined && minAvailable !== null) {
    const expectedPods = expectedScale(pods, replicaSets);
    return {
      expectedPods,
      desiredHealthy: scaledIntOrPercent(minAvailable, expectedPods, true, 'spec.minAvailable'),
    };
  }
  return { expectedPods: 0, desiredHealthy: 0 };
}

/** status.disruptedPods kept: pods still present, not yet terminating, evicted less than the timeout ago. */
function liveDisruptedPods(
  previous: unknown,
  pods: KubeObject[],
  now: Date,
): { kept: Record<string, string>; nextChangeAt?: Date } {
  const kept: Record<string, string> = {};
  let nextChangeAt: Date | undefined;
  if (!isPlainObject(previous)) return { kept };
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const name = pod.metadata.name ?? '';
    const at = parseKubeTime(previous[name]);
    if (at === undefined) continue;
    const expires = at + DISRUPTED_POD_TIMEOUT_MS;
    if (expires <= now.getTime()) continue;
    kept[name] = formatKubeTime(at);
    if (!nextChangeAt || expires < nextChangeAt.getTime()) nextChangeAt = new Date(expires);
  }
  return nextChangeAt ? { kept, nextChangeAt } : { kept };
}

/**
 * Sets the DisruptionAllowed condition as apimeta.SetStatusCondition does: lastTransitionTime moves
 * only when the status flips; reason, message and observedGeneration follow the latest pass.
 */
export function withDisruptionAllowedCondition(
  status: Record<string, unknown>,
  previousConditions: unknown,
  now: Date,
  failure?: string,
): Record<string, unknown> {
  const allowed = typeof status.disruptionsAllowed === 'number' && status.disruptionsAllowed > 0;
  const conditions = Array.isArray(previousConditions) ? previousConditions.filter(isPlainObject) : [];
  const previous = conditions.find((c) => c.type === DISRUPTION_ALLOWED);
  const next = {
    type: DISRUPTION_ALLOWED,
    status: failure === undefined && allowed ? 'True' : 'False',
    observedGeneration: status.observedGeneration,
    lastTransitionTime: formatKubeTime(now),
    reason: failure !== undefined ? 'SyncFailed' : allowed ? 'SufficientPods' : 'InsufficientPods',
    message: failure ?? '',
  };
  if (previous?.status === next.status && typeof previous.lastTransitionTime === 'string')
    next.lastTransitionTime = previous.lastTransitionTime;
  const others = conditions.filter((c) => c !== previous);
  return { ...status, conditions: [...others, next] };
}

/**
 * One disruption-controller pass. `pods` may be every pod (those the PDB selects are picked here);
 * `replicaSets` are the ReplicaSets of the PDB's namespace (for expectedPods).
 */
export function planDisruptionBudget(
  pdb: KubeObject,
  pods: KubeObject[],
  replicaSets: KubeObject[],
  now: Date,
): DisruptionBudgetPlan {
  const selected = pods.filter((pod) => budgetSelects(pdb, pod));
  const observedGeneration = pdb.metadata.generation ?? 1;
  const previous = isPlainObject(pdb.status) ? pdb.status : {};
  let counts: { expectedPods: number; desiredHealthy: number };
  try {
    counts = expectedAndDesired(pdb, selected, replicaSets);
  } catch (err) {
    if (!(err instanceof DisruptionBudgetSpecError)) throw err;
    // The controller's failSafe: nothing may be disrupted while the budget cannot be computed.
    const failed = { ...previous, disruptionsAllowed: 0, observedGeneration };
    return {
      currentHealthy: typeof previous.currentHealthy === 'number' ? previous.currentHealthy : 0,
      desiredHealthy: typeof previous.desiredHealthy === 'number' ? previous.desiredHealthy : 0,
      expectedPods: typeof previous.expectedPods === 'number' ? previous.expectedPods : 0,
      disruptionsAllowed: 0,
      status: withDisruptionAllowedCondition(failed, previous.conditions, now, err.message),
    };
  }
  const disrupted = liveDisruptedPods(previous.disruptedPods, selected, now);
  const currentHealthy = selected.filter(
    (pod) =>
      pod.metadata.deletionTimestamp === undefined &&
      disrupted.kept[pod.metadata.name ?? ''] === undefined &&
      isPodReady(pod),
  ).length;
  const surplus = currentHealthy - counts.desiredHealthy;
  const disruptionsAllowed = counts.expectedPods <= 0 || surplus <= 0 ? 0 : surplus;
  const status: Record<string, unknown> = { observedGeneration };
  if (Object.keys(disrupted.kept).length > 0) status.disruptedPods = disrupted.kept;
  Object.assign(status, {
    disruptionsAllowed,
    currentHealthy,
    desiredHealthy: counts.desiredHealthy,
    expectedPods: counts.expectedPods,
  });
  return {
    currentHealthy,
    desiredHealthy: counts.desiredHealthy,
    expectedPods: counts.expectedPods,
    disruptionsAllowed,
    status: withDisruptionAllowedCondition(status, previous.conditions, now),
    ...(disrupted.nextChangeAt ? { nextChangeAt: disrupted.nextChangeAt } : {}),
  };
}
