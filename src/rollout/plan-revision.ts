// Sub-planner: which pod template is current, which ReplicaSets are canary, stable and old, and supersede.
import type { Rollout } from '../manifest/rollout.ts';
import type { ObservedReplicaSet, ObservedState } from './observed-state.ts';
import { podTemplateHash } from './pod-template-hash.ts';
import { runsTemplate } from './replica-set-template.ts';
import type { RolloutContext } from './rollout-context.ts';

/** How the observed ReplicaSets relate to the rollout's current template. */
export interface Revision {
  /**
   * The revision being rolled out: the hash of spec.template, or the hash label of the ReplicaSet that
   * already runs spec.template under another hash (one Argo Rollouts created), which is adopted as is.
   */
  hash: string;
  /** The ReplicaSet of `hash`, if it exists (adopted when several carry the hash: the `<rollout>-<hash>` one first). */
  current?: ObservedReplicaSet;
  /** status.stableRS when its ReplicaSet still exists; otherwise absent (the next revision becomes stable at once). */
  stableHash?: string;
  stable?: ObservedReplicaSet;
  /** Every other ReplicaSet (neither current nor stable), oldest first. */
  others: ObservedReplicaSet[];
  /** status.currentPodHash differs from `hash`: a new template arrived since the last pass. */
  newRevision: boolean;
  /** The canary a new template replaced before it completed (status.currentPodHash), if any. */
  supersededHash?: string;
}

/** What classifying the revision reads of a pass: the Rollout, its name and status, its ReplicaSets. */
export type RevisionInput = Pick<RolloutContext, 'rollout' | 'name' | 'status'> & {
  observed: Pick<ObservedState, 'replicaSets'>;
};

/** Name of the ReplicaSet for a revision: `<rollout>-<hash>`. */
export function replicaSetName(rolloutName: string, hash: string): string {
  return `${rolloutName}-${hash}`;
}

function byCreation(a: ObservedReplicaSet, b: ObservedReplicaSet): number {
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function pick(sets: readonly ObservedReplicaSet[], preferredName: string): ObservedReplicaSet | undefined {
  return sets.find((rs) => rs.name === preferredName) ?? sets[0];
}

/**
 * The ReplicaSet that runs spec.template under a hash of its own (another controller's hash function,
 * or another collision count), when none carries the hash of spec.template. Among several, the one
 * status.currentPodHash names, then the one status.stableRS names, then the oldest (as Argo).
 */
function runningTemplate(context: RevisionInput, sets: readonly ObservedReplicaSet[]) {
  const template = context.rollout.spec.template;
  const candidates = sets.filter((rs) => rs.podTemplateHash !== '' && runsTemplate(rs, template));
  const { currentPodHash, stableRS } = context.status;
  return (
    candidates.find((rs) => rs.podTemplateHash === currentPodHash) ??
    candidates.find((rs) => rs.podTemplateHash === stableRS) ??
    candidates[0]
  );
}

/**
 * Classifies ReplicaSets by pod-template hash. The revision is found by the hash of spec.template first;
 * failing that, a ReplicaSet whose template is spec.template (under another hash) is the revision's and
 * its hash becomes the revision's, so its pods keep running: this is how ReplicaSets Argo Rollouts left
 * are taken over. Extra ReplicaSets carrying the current or stable hash (duplicates) count as old ones,
 * so they are scaled down rather than ignored.
 */
export function planRevision(context: RevisionInput): Revision {
  const { status, name } = context;
  const ownHash = podTemplateHash(context.rollout.spec.template, status.collisionCount);
  const sets = [...context.observed.replicaSets].sort(byCreation);
  const byHash = pick(
    sets.filter((rs) => rs.podTemplateHash === ownHash),
    replicaSetName(name, ownHash),
  );
  // The own hash is trusted, as Argo trusts its own, unless its ReplicaSet runs another template (a hash
  // collision) while another ReplicaSet runs this one. A template that only seems to differ (a default
  // the comparison does not know) finds no other ReplicaSet, so the hash still decides.
  const byTemplate =
    byHash === undefined || !runsTemplate(byHash, context.rollout.spec.template)
      ? runningTemplate(
          context,
          sets.filter((rs) => rs !== byHash),
        )
      : undefined;
  const hash = byTemplate?.podTemplateHash ?? ownHash;
  const current =
    byTemplate === undefined
      ? byHash
      : pick(
          sets.filter((rs) => rs.podTemplateHash === hash),
          byTemplate.name,
        );
  const stableHashInStatus =
    status.stableRS !== undefined && status.stableRS !== '' ? status.stableRS : undefined;
  const stable =
    stableHashInStatus === undefined
      ? undefined
      : stableHashInStatus === hash
        ? current
        : pick(
            sets.filter((rs) => rs.podTemplateHash === stableHashInStatus),
            replicaSetName(name, stableHashInStatus),
          );
  const stableHash = stable !== undefined ? stableHashInStatus : undefined;
  const others = sets.filter((rs) => rs !== current && rs !== stable);
  const previous = status.currentPodHash;
  const newRevision = previous !== hash;
  const supersededHash =
    newRevision && previous !== undefined && previous !== '' && previous !== stableHashInStatus
      ? previous
      : undefined;
  return { hash, current, stableHash, stable, others, newRevision, supersededHash };
}

/**
 * The revision the Rollout's template is, as a reconcile pass names it: the hash of the template, or the
 * hash of the ReplicaSet that runs it under another (adopted from Argo Rollouts).
 */
export function revisionHashOf(rollout: Rollout, replicaSets: readonly ObservedReplicaSet[]): string {
  return planRevision({
    rollout,
    name: rollout.metadata.name,
    status: rollout.status ?? {},
    observed: { replicaSets: [...replicaSets] },
  }).hash;
}
