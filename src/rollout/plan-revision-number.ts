// Adds a pass's revision number where Argo's tools read it: the current ReplicaSet renumbered, the Rollout annotated.
import type { Revision } from './plan-revision.ts';
import { REVISION_ANNOTATION, type RolloutAction } from './rollout-action.ts';
import type { RolloutPlan } from './rollout-plan.ts';

/** What numbering a pass reads: the Rollout's annotations as read, and the revision classified. */
export interface RevisionNumberInput {
  plan: RolloutPlan;
  revision: Pick<Revision, 'number' | 'renumber' | 'current'>;
  rolloutAnnotations: Readonly<Record<string, string>> | undefined;
}

/**
 * The plan with the writes that make the revision's number visible where Argo's tools read it. A current
 * ReplicaSet that lacks its number (a rollback to it, or one adopted without one) gets it in the scale
 * the pass already makes of it, or in a write of its own at its present size (one write per ReplicaSet a
 * pass, so both never race on one resourceVersion). The Rollout is annotated with the number once its
 * ReplicaSet exists or is being created (RolloutPlan.annotations), as Argo copies the ReplicaSet's number
 * to the Rollout. A new write goes after the pass's own and before its events.
 */
export function withRevisionNumber({ plan, revision, rolloutAnnotations }: RevisionNumberInput): RolloutPlan {
  const writes: RolloutAction[] = [];
  let actions = plan.actions;
  const current = revision.current;
  if (current !== undefined && revision.renumber !== undefined) {
    const renumber = revision.renumber;
    const scaled = actions.some((a) => a.kind === 'scaleReplicaSet' && a.name === current.name);
    if (scaled) {
      actions = actions.map((a) =>
        a.kind === 'scaleReplicaSet' && a.name === current.name
          ? { ...a, annotations: { ...(a.annotations ?? {}), ...renumber } }
          : a,
      );
    } else {
      writes.push({
        kind: 'scaleReplicaSet',
        name: current.name,
        resourceVersion: current.resourceVersion,
        replicas: current.replicas,
        annotations: renumber,
      });
    }
  }
  const created = actions.some((a) => a.kind === 'createReplicaSet');
  const number = String(revision.number);
  const annotate = (current !== undefined || created) && rolloutAnnotations?.[REVISION_ANNOTATION] !== number;
  const annotated: RolloutPlan = annotate
    ? { ...plan, annotations: { ...(plan.annotations ?? {}), [REVISION_ANNOTATION]: number } }
    : plan;
  if (writes.length === 0 && actions === plan.actions) return annotated;
  const events = actions.filter((a) => a.kind === 'emitEvent');
  const others = actions.filter((a) => a.kind !== 'emitEvent');
  return { ...annotated, actions: [...others, ...writes, ...events] };
}
