// spec.workloadRef in the planner: waiting for a Deployment that cannot be used, and scaling it down as scaleDown says.
import { ROLLOUT_DEFAULTS, type Rollout, type RolloutStatus } from '../manifest/rollout.ts';
import { WORKLOAD_KINDS } from '../manifest/workload-kinds.ts';
import type { ObservedReplicaSet, ObservedWorkload } from './observed-state.ts';
import { applyInvalidSpec } from './plan-status.ts';
import type { ScaleDeploymentAction } from './rollout-action.ts';
import type { RolloutPlan } from './rollout-plan.ts';

/** Reason of the InvalidSpec condition and of the Warning Event while the Deployment does not exist. */
export const WORKLOAD_REF_NOT_FOUND = 'WorkloadRefNotFound';
/** The same for a reference that cannot be used at all (another kind, a template beside it), as Argo names it. */
export const WORKLOAD_REF_INVALID = 'InvalidSpec';

/**
 * The plan while the referenced Deployment cannot be used: condition InvalidSpec naming why, a Warning
 * Event (deduplicated by the executor), and nothing else. No ReplicaSet is touched and no requeue is
 * asked: the Deployment watch enqueues the rollout when the Deployment appears or changes.
 */
export function planUnresolvedWorkload(
  rollout: Rollout,
  workload: Extract<ObservedWorkload, { state: 'unresolved' }>,
  now: Date,
): RolloutPlan {
  const live: RolloutStatus = rollout.status ?? {};
  const generation = rollout.metadata.generation;
  const observed = generation !== undefined ? { ...live, observedGeneration: String(generation) } : live;
  const reason = workload.cause === 'notFound' ? WORKLOAD_REF_NOT_FOUND : WORKLOAD_REF_INVALID;
  const status = applyInvalidSpec(observed, workload.reason, reason, now);
  return {
    actions: [{ kind: 'emitEvent', type: 'Warning', reason, message: workload.reason }],
    status,
  };
}

/** What decides the Deployment's replicas after a pass. */
export interface WorkloadScaleDownInput {
  rollout: Rollout;
  workload: Extract<ObservedWorkload, { state: 'resolved' }>;
  replicaSets: readonly ObservedReplicaSet[];
  /** The status this pass writes. */
  planned: RolloutStatus;
}

/**
 * The Deployment's replica target, or undefined to leave it alone. Only ever lower than what it has: the
 * rollout takes the Deployment's pods over, it never gives them back.
 * - never (default): untouched.
 * - onsuccess: 0 once the stable recorded in the live status (and kept by this pass) has all the desired
 *   pods available: the rollout has succeeded. This holds on later revisions too, so replicas that a sync
 *   from Git puts back on the Deployment (with a new template) are taken away again at once instead of
 *   running the new template outside the canary until the rollout is Healthy again.
 * - progressively: the rollout's replicas minus the pods its ReplicaSets have available, so the two
 *   together keep the desired count available; pods that never become available (an image that cannot
 *   be pulled) take nothing from the Deployment.
 */
export function workloadReplicaTarget(input: WorkloadScaleDownInput): number | undefined {
  const { rollout, workload, replicaSets, planned } = input;
  // A ReplicaSet or PodTemplate is only read from (validate refuses scaleDown with one, as a guard here too).
  if (!WORKLOAD_KINDS.some((row) => row.kind === workload.kind && row.scalesDown)) return undefined;
  const mode = rollout.spec.workloadRef?.scaleDown ?? ROLLOUT_DEFAULTS.workloadRef.scaleDown;
  const desired = rollout.spec.replicas ?? ROLLOUT_DEFAULTS.replicas;
  let target: number | undefined;
  if (mode === 'onsuccess') {
    const stableHash = rollout.status?.stableRS;
    const stable = replicaSets.find((rs) => rs.controlledByRollout && rs.podTemplateHash === stableHash);
    if (stable !== undefined && planned.stableRS === stableHash && stable.status.availableReplicas >= desired)
      target = 0;
  } else if (mode === 'progressively') {
    const available = replicaSets
      .filter((rs) => rs.controlledByRollout)
      .reduce((sum, rs) => sum + rs.status.availableReplicas, 0);
    target = Math.max(0, desired - available);
  }
  return target !== undefined && target < workload.replicas ? target : undefined;
}

/**
 * Adds the Deployment's scale-down (after every other write of the pass, so a failing one never holds up
 * the rollout's own) and status.workloadObservedGeneration, as Argo reports it.
 */
export function withWorkloadScaleDown(plan: RolloutPlan, input: WorkloadScaleDownInput): RolloutPlan {
  const status = { ...plan.status, workloadObservedGeneration: String(input.workload.generation) };
  const replicas = workloadReplicaTarget({ ...input, planned: plan.status });
  if (replicas === undefined) return { ...plan, status };
  const scale: ScaleDeploymentAction = {
    kind: 'scaleDeployment',
    name: input.workload.name,
    resourceVersion: input.workload.resourceVersion,
    replicas,
  };
  const events = plan.actions.filter((a) => a.kind === 'emitEvent');
  const writes = plan.actions.filter((a) => a.kind !== 'emitEvent');
  return {
    ...plan,
    actions: [
      ...writes,
      scale,
      ...events,
      {
        kind: 'emitEvent',
        type: 'Normal',
        reason: 'ScalingDeployment',
        message: `Scaled down Deployment ${input.workload.name} to ${replicas} (workloadRef.scaleDown ${input.rollout.spec.workloadRef?.scaleDown ?? 'never'})`,
      },
    ],
    status,
  };
}
