// Sub-planner: spec.rollbackWindow — a rollback to a recent revision skips the steps, pauses and analysis.
import type { Revision } from './plan-revision.ts';

/** The annotation Argo Rollouts puts on an Experiment's ReplicaSets: they are no revisions of the Rollout. */
export const EXPERIMENT_NAME_ANNOTATION = 'experiment.argoproj.io/name';

/**
 * Whether the revision being rolled out is a rollback within spec.rollbackWindow.revisions, as Argo
 * Rollouts counts it: its ReplicaSet still exists and is older than the stable's, and fewer than `revisions`
 * ReplicaSets (an Experiment's not counted) were created between the two. So `revisions: 1` takes back
 * only the revision right before the stable, `2` the one before it too, and so on. Such a rollback goes
 * straight to full, as a full promotion would, without steps, pauses or analysis. Creation times have
 * seconds: ReplicaSets created in the same second are not "between".
 */
export function withinRollbackWindow(
  revisions: number | undefined,
  revision: Pick<Revision, 'current' | 'stable' | 'others'>,
): boolean {
  const { current, stable } = revision;
  if (revisions === undefined || revisions <= 0 || current === undefined || stable === undefined)
    return false;
  if (current === stable) return false;
  const from = Date.parse(current.creationTimestamp);
  const to = Date.parse(stable.creationTimestamp);
  if (Number.isNaN(from) || Number.isNaN(to) || !(from < to)) return false;
  const between = revision.others.filter((rs) => {
    if (rs.annotations[EXPERIMENT_NAME_ANNOTATION] !== undefined) return false;
    const at = Date.parse(rs.creationTimestamp);
    return from < at && at < to;
  });
  return between.length < revisions;
}
