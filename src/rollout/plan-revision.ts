// Sub-planner: which pod template is current, which ReplicaSets are canary, stable and old, and supersede.
import type { ObservedReplicaSet } from './observed-state.ts';
import { podTemplateHash } from './pod-template-hash.ts';
import type { RolloutContext } from './rollout-context.ts';

/** How the observed ReplicaSets relate to the rollout's current template. */
export interface Revision {
  /** Hash of spec.template: the revision being rolled out. */
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
 * Classifies ReplicaSets by pod-template hash. Extra ReplicaSets carrying the current or stable hash
 * (duplicates) count as old ones, so they are scaled down rather than ignored.
 */
export function planRevision(context: RolloutContext): Revision {
  const { status, name } = context;
  const hash = podTemplateHash(context.rollout.spec.template, status.collisionCount);
  const sets = [...context.observed.replicaSets].sort(byCreation);
  const current = pick(
    sets.filter((rs) => rs.podTemplateHash === hash),
    replicaSetName(name, hash),
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
