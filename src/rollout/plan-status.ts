// Sub-planner: the status fields derived from the pass — counts, phase, message and conditions.
import type { RolloutPhase, RolloutStatus } from '../manifest/rollout.ts';
import type { ObservedReplicaSet } from './observed-state.ts';
import { removeCondition, setCondition } from './rollout-conditions.ts';
import type { PlannedRolloutStatus } from './rollout-plan.ts';

/**
 * Pod counts summed over the rollout's ReplicaSets (updatedReplicas: the current revision's). With
 * `active` (blue-green, the ReplicaSet the active Service selects), ready and available pods are the
 * active ReplicaSet's only, as Argo reports them: a preview revision's pods serve no user traffic, so an
 * HPA or a health check reading these must not count them. `replicas` stays the sum (the pods running).
 */
export function replicaCounts(
  sets: readonly ObservedReplicaSet[],
  current: ObservedReplicaSet | undefined,
  active?: ObservedReplicaSet,
): Pick<RolloutStatus, 'replicas' | 'updatedReplicas' | 'readyReplicas' | 'availableReplicas'> {
  let replicas = 0;
  let ready = 0;
  let available = 0;
  for (const rs of sets) {
    replicas += rs.status.replicas;
    ready += rs.status.readyReplicas;
    available += rs.status.availableReplicas;
  }
  return {
    replicas,
    updatedReplicas: current?.status.replicas ?? 0,
    readyReplicas: active?.status.readyReplicas ?? ready,
    availableReplicas: active?.status.availableReplicas ?? available,
  };
}

/** What the pass concluded, for phase, message and conditions. */
export interface Outcome {
  phase: RolloutPhase;
  message: string;
  /** The current ReplicaSet's name, for condition messages. */
  replicaSetName: string;
  /** The current revision's pod-template hash. */
  hash: string;
  aborted: boolean;
  deadlineExceeded: boolean;
  paused: boolean;
  completed: boolean;
  /** Available pods ≥ replicas − maxUnavailable. */
  minimumAvailable: boolean;
  /** `pod P container C: Reason` for failing pods of the current revision; '' when none. */
  podFailures: string;
}

/** Sets phase, message and the conditions for `outcome` on `status` (returns a new object). */
export function applyOutcome(
  status: PlannedRolloutStatus,
  outcome: Outcome,
  now: Date,
): PlannedRolloutStatus {
  let conditions = removeCondition(status.conditions, 'InvalidSpec');
  const rsName = outcome.replicaSetName;
  conditions = setCondition(
    conditions,
    // A deadline abort keeps saying why (as Argo): the deadline, not the abort that followed it.
    outcome.aborted && !outcome.deadlineExceeded
      ? { type: 'Progressing', status: 'False', reason: 'RolloutAborted', message: outcome.message }
      : outcome.deadlineExceeded
        ? {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: `ReplicaSet "${rsName}" has timed out progressing.`,
          }
        : outcome.paused
          ? { type: 'Progressing', status: 'Unknown', reason: 'RolloutPaused', message: 'Rollout is paused' }
          : outcome.completed
            ? {
                type: 'Progressing',
                status: 'True',
                reason: 'NewReplicaSetAvailable',
                message: `ReplicaSet "${rsName}" has successfully progressed.`,
              }
            : {
                type: 'Progressing',
                status: 'True',
                reason: 'ReplicaSetUpdated',
                message: `ReplicaSet "${rsName}" is progressing.`,
              },
    now,
  );
  conditions = setCondition(
    conditions,
    outcome.minimumAvailable
      ? {
          type: 'Available',
          status: 'True',
          reason: 'AvailableReason',
          message: 'Rollout has minimum availability',
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'AvailableReason',
          message: 'Rollout does not have minimum availability',
        },
    now,
  );
  conditions = setCondition(
    conditions,
    outcome.paused
      ? { type: 'Paused', status: 'True', reason: 'RolloutPaused', message: 'Rollout is paused' }
      : { type: 'Paused', status: 'False', reason: 'RolloutResumed', message: 'Rollout is not paused' },
    now,
  );
  conditions =
    outcome.podFailures === ''
      ? removeCondition(conditions, 'ReplicaFailure')
      : setCondition(
          conditions,
          { type: 'ReplicaFailure', status: 'True', reason: 'PodsFailing', message: outcome.podFailures },
          now,
        );
  conditions = setCondition(
    conditions,
    outcome.completed
      ? {
          type: 'Completed',
          status: 'True',
          reason: 'RolloutCompleted',
          message: `Rollout completed update to revision ${outcome.hash}`,
        }
      : {
          type: 'Completed',
          status: 'False',
          reason: 'RolloutNotCompleted',
          message: 'Rollout not completed',
        },
    now,
  );
  const healthy = outcome.completed && outcome.phase === 'Healthy';
  conditions = setCondition(
    conditions,
    healthy
      ? { type: 'Healthy', status: 'True', reason: 'RolloutHealthy', message: 'Rollout is healthy' }
      : { type: 'Healthy', status: 'False', reason: 'RolloutHealthy', message: 'Rollout is not healthy' },
    now,
  );
  return { ...status, phase: outcome.phase, message: outcome.message, conditions };
}

/** The status for a spec the planner cannot act on: phase Degraded, condition InvalidSpec, nothing else touched. */
export function applyInvalidSpec(
  status: RolloutStatus,
  message: string,
  reason: string,
  now: Date,
): RolloutStatus {
  const conditions = setCondition(
    status.conditions,
    { type: 'InvalidSpec', status: 'True', reason, message },
    now,
  );
  return { ...status, phase: 'Degraded', message: `InvalidSpec: ${message}`, conditions };
}
