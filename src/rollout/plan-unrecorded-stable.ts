// Sub-planner: a status that never landed (every write of it lost to conflicts) while a newer template arrived.
import { LOOK_REASONS } from './pass/finish-pass.ts';
import { revisionNumberOf, type Revision } from './plan-revision.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION } from './rollout-action.ts';
import type { RolloutContext } from './rollout-context.ts';
import type { RolloutPlan } from './rollout-plan.ts';

/**
 * The hash of the ReplicaSet a lost first status named stable: the status records no pass at all (no
 * stableRS, no currentPodHash), yet a ReplicaSet of another template runs pods with no scale-down
 * deadline. Only a pass of this rollout creates such a ReplicaSet, and the first one names it stable in
 * the status it writes after the create; when that write (and its retries) failed with 409 and a new
 * template arrived before the next one, the ReplicaSet is the stable all the same. Among several, the
 * highest revision number, then the newest. Undefined when the status recorded a pass, or no such set.
 */
export function unrecordedStableHash(
  context: Pick<RolloutContext, 'status' | 'observed'>,
  revision: Pick<Revision, 'hash'>,
): string | undefined {
  const { stableRS, currentPodHash } = context.status;
  if ((stableRS !== undefined && stableRS !== '') || (currentPodHash !== undefined && currentPodHash !== ''))
    return undefined;
  const candidates = context.observed.replicaSets.filter(
    (rs) =>
      rs.podTemplateHash !== '' &&
      rs.podTemplateHash !== revision.hash &&
      rs.replicas > 0 &&
      rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION] === undefined,
  );
  const [newest] = [...candidates].sort(
    (a, b) =>
      revisionNumberOf(b) - revisionNumberOf(a) ||
      (a.creationTimestamp === b.creationTimestamp ? 0 : a.creationTimestamp < b.creationTimestamp ? 1 : -1),
  );
  return newest?.podTemplateHash;
}

/**
 * The pass for that state: record what the lost write would have (stableRS and currentPodHash naming
 * that ReplicaSet) and do nothing else, then look again at once. The next pass sees a stable and a new
 * template, a canary like any other. Without this, "no stable" read as a first deploy: the new template
 * went to full scale at once, skipping the steps, and the stable's pods were swept as an orphan's, with
 * two ReplicaSets running pods and neither named stable. Recording first, as an abort is, means no
 * ReplicaSet is created or scaled on a role the status does not hold.
 */
export function planUnrecordedStable(context: RolloutContext, revision: Revision): RolloutPlan | undefined {
  // Blue-green's first status also names the active ReplicaSet; its recovery is not this one.
  if (context.rollout.spec.strategy.blueGreen !== undefined) return undefined;
  const stableHash = unrecordedStableHash(context, revision);
  if (stableHash === undefined) return undefined;
  return {
    actions: [],
    status: { ...context.status, stableRS: stableHash, currentPodHash: stableHash },
    requeueAfterMs: 0,
    requeueReason: LOOK_REASONS.phaseRecorded,
  };
}
