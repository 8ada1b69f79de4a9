// Restart (spec.restartAt): a rolling recreate of the stable and canary pods, without a new revision.
import { InvalidSpecError } from './invalid-spec-error.ts';
import type { ObservedPod, ObservedReplicaSet } from './observed-state.ts';
import type { EmitEventAction, EvictPodAction } from './rollout-action.ts';

/** While a restart is under way, how soon to look again if no pod or ReplicaSet change wakes us first. */
export const RESTART_RECHECK_MS = 5000;

export interface RestartInput {
  /** spec.restartAt: pods created before it are replaced. */
  restartAt: string | undefined;
  /** status.restartedAt: the last restartAt that was completed (or cancelled). */
  restartedAt: string | undefined;
  now: Date;
  /** The pod template changed in this pass: new pods come anyway, so the restart is cancelled (as Argo). */
  newRevision: boolean;
  /**
   * The ReplicaSets to restart, in order: stable, then the current revision. Old ReplicaSets on their way
   * out are not restarted: their pods go at their scale-down deadline.
   */
  replicaSets: ReadonlyArray<ObservedReplicaSet | undefined>;
  /** Every ReplicaSet of the rollout: all their available pods count toward capacity. */
  allReplicaSets: readonly ObservedReplicaSet[];
  /** spec.replicas: capacity is measured against it. */
  desiredReplicas: number;
  /** Live (non-terminating) pods of the rollout. */
  pods: readonly ObservedPod[];
  /** Pods of the rollout already terminating. */
  terminatingPods: number;
  /** The rollout's maxUnavailable, resolved to a count; a restart disrupts at least one pod at a time. */
  maxUnavailable: number;
  /** This pass creates, scales or deletes ReplicaSets: a restart waits until they hold still. */
  reshaping: boolean;
}

export interface RestartPlan {
  evictions: EvictPodAction[];
  events: EmitEventAction[];
  /** Set when the restart is complete or cancelled: the next status.restartedAt. */
  restartedAt?: string;
  wakeAtMs?: number;
}

const NOTHING: RestartPlan = { evictions: [], events: [] };

/** The restart is over (done or cancelled): status.restartedAt catches up with spec.restartAt. */
function ended(restartAt: string, reason: string, message: string): RestartPlan {
  return {
    ...NOTHING,
    restartedAt: restartAt,
    events: [{ kind: 'emitEvent', type: 'Normal', reason, message }],
  };
}

function oldestFirst(a: ObservedPod, b: ObservedPod): number {
  const byTime = Date.parse(a.creationTimestamp ?? '') - Date.parse(b.creationTimestamp ?? '');
  return Number.isNaN(byTime) || byTime === 0 ? a.name.localeCompare(b.name) : byTime;
}

/**
 * The pods of the given revisions that a restart at `restartAt` replaces, oldest first: those created
 * before it. A pod without a creation time cannot be shown newer, so it counts.
 */
export function podsToRestart(
  pods: readonly ObservedPod[],
  hashes: ReadonlySet<string>,
  restartAt: string,
): ObservedPod[] {
  const restartAtMs = Date.parse(restartAt);
  return pods
    .filter((pod) => {
      if (!hashes.has(pod.podTemplateHash)) return false;
      const created = Date.parse(pod.creationTimestamp ?? '');
      return Number.isNaN(created) || created < restartAtMs;
    })
    .sort(oldestFirst);
}

/**
 * Plans one pass of a restart. Pure. Pods created before spec.restartAt are evicted oldest first, one
 * ReplicaSet at a time (stable first), never more at once than maxUnavailable (at least one) minus the
 * pods already unavailable or terminating, so a restart never takes more capacity than a rolling update
 * would. The restart is complete, and status.restartedAt = spec.restartAt, once no such pod is left and
 * every replaced pod is available again.
 *
 * @throws InvalidSpecError when spec.restartAt is not a time.
 */
export function planRestart(input: RestartInput): RestartPlan {
  const { restartAt } = input;
  if (restartAt === undefined) return NOTHING;
  const restartAtMs = Date.parse(restartAt);
  if (Number.isNaN(restartAtMs))
    throw new InvalidSpecError(
      `must be an RFC 3339 time, got ${JSON.stringify(restartAt)}`,
      'spec.restartAt',
    );
  const doneMs = Date.parse(input.restartedAt ?? '');
  if (!Number.isNaN(doneMs) && doneMs >= restartAtMs) return NOTHING;
  const nowMs = input.now.getTime();
  if (nowMs < restartAtMs) return { ...NOTHING, wakeAtMs: restartAtMs };
  if (input.newRevision) {
    return ended(
      restartAt,
      'RestartCancelled',
      `Restart requested at ${restartAt} cancelled: a new revision replaces the pods`,
    );
  }

  const replicaSets = input.replicaSets.filter(
    (rs, index, all): rs is ObservedReplicaSet =>
      rs !== undefined && rs.replicas > 0 && all.findIndex((other) => other?.name === rs.name) === index,
  );
  const oldPods = podsToRestart(input.pods, new Set(replicaSets.map((rs) => rs.podTemplateHash)), restartAt);
  // A ReplicaSet's available pods, by its status or by the pod list if that is ahead of the status.
  const availableOf = (rs: ObservedReplicaSet) =>
    Math.min(
      rs.status.availableReplicas,
      input.pods.filter((pod) => pod.podTemplateHash === rs.podTemplateHash && pod.ready).length,
    );
  // Unavailable now: the larger of what the restarted ReplicaSets miss and what the whole rollout misses
  // against spec.replicas (a canary step may be using the budget itself), plus pods on their way out.
  const missing = replicaSets.reduce((sum, rs) => sum + Math.max(0, rs.replicas - availableOf(rs)), 0);
  const total = input.allReplicaSets.reduce((sum, rs) => sum + availableOf(rs), 0);
  const unavailable = input.terminatingPods + Math.max(missing, input.desiredReplicas - total);

  if (oldPods.length === 0) {
    if (unavailable > 0) return { ...NOTHING, wakeAtMs: nowMs + RESTART_RECHECK_MS };
    return ended(restartAt, 'RolloutRestarted', `All pods created before ${restartAt} were replaced`);
  }
  const waiting = { ...NOTHING, wakeAtMs: nowMs + RESTART_RECHECK_MS };
  if (input.reshaping) return waiting;
  const budget = Math.max(1, input.maxUnavailable) - unavailable;
  if (budget <= 0) return waiting;

  // One ReplicaSet at a time, in the given order: the first that still has pods to replace.
  const target = replicaSets.find((rs) => oldPods.some((pod) => pod.podTemplateHash === rs.podTemplateHash));
  const chosen = oldPods.filter((pod) => pod.podTemplateHash === target?.podTemplateHash).slice(0, budget);
  return {
    ...waiting,
    evictions: chosen.map((pod) => ({
      kind: 'evictPod',
      name: pod.name,
      podTemplateHash: pod.podTemplateHash,
      ...(pod.uid !== undefined ? { uid: pod.uid } : {}),
    })),
    events: [
      {
        kind: 'emitEvent',
        type: 'Normal',
        reason: 'RestartingPods',
        message: `Restarting pods created before ${restartAt}: evicting ${chosen.map((pod) => pod.name).join(', ')}`,
      },
    ],
  };
}
