// The rollout's ReplicaSets as the replica arithmetic counts them, and the write that creates one.
import type { ReplicaSetCount } from './canary-replica-counts.ts';
import type { ObservedReplicaSet } from './observed-state.ts';
import type { OldReplicaSet } from './plan-scale-down.ts';
import { replicaSetName, type Revision } from './plan-revision.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
  type CreateReplicaSetAction,
} from './rollout-action.ts';
import type { RolloutContext } from './rollout-context.ts';
import { antiAffinityOf, withAntiAffinity } from './anti-affinity.ts';
import { ephemeralMetadataFor, roleOf, withEphemeralMetadata } from './ephemeral-metadata.ts';
import { COMMIT_ANNOTATION, COMMIT_AUTHOR_ANNOTATION } from '../manifest/commit-annotations.ts';

/**
 * The Rollout's annotations a new ReplicaSet keeps: the Git commit (and its author) the revision came
 * from. On the Rollout they are overwritten by the next sync; on the ReplicaSet they stay with the
 * revision, so each revision can say whose change it is.
 */
const REVISION_ORIGIN = [COMMIT_ANNOTATION, COMMIT_AUTHOR_ANNOTATION] as const;

const ZERO: ReplicaSetCount = { replicas: 0, available: 0 };

/** What `rs` asks for and has available (never more available than asked for); zero when absent. */
export function countOf(rs: ObservedReplicaSet | undefined): ReplicaSetCount {
  if (rs === undefined) return ZERO;
  return { replicas: rs.replicas, available: Math.min(rs.status.availableReplicas, rs.replicas) };
}

/** Old ReplicaSets as the arithmetic takes them: counts plus whether their scale-down is due. */
export function oldCounts(old: readonly OldReplicaSet[]): Array<ReplicaSetCount & { scaleDown: boolean }> {
  return old.map((entry) => ({ ...countOf(entry.rs), scaleDown: entry.due }));
}

/**
 * Creates the ReplicaSet of `revision` from the rollout's template, with `replicas` pods, stamped with the
 * revision's number. Its selector is the rollout's (matchLabels and matchExpressions) plus the hash label.
 * Its template gets what Argo injects for the role the revision starts in: the ephemeral metadata of a
 * revision beside a stable (canaryMetadata / previewMetadata) or of the stable it becomes at once
 * (stableMetadata / activeMetadata), and the antiAffinity rule against the stable's pods.
 */
export function createReplicaSet(
  context: RolloutContext,
  revision: Pick<Revision, 'hash' | 'number' | 'stableHash'>,
  replicas: number,
): CreateReplicaSetAction {
  const strategy = context.rollout.spec.strategy;
  const role = roleOf(revision.hash, { revisionHash: revision.hash, stableHash: revision.stableHash });
  const created = withEphemeralMetadata(
    replicaSetOf(context, revision, replicas),
    ephemeralMetadataFor(strategy, role),
  );
  return withAntiAffinity(
    created,
    antiAffinityOf(strategy),
    revision.stableHash,
    context.rollout.metadata.namespace,
  );
}

/** The ReplicaSet of `revision` as the template alone makes it. */
function replicaSetOf(
  context: RolloutContext,
  revision: Pick<Revision, 'hash' | 'number'>,
  replicas: number,
): CreateReplicaSetAction {
  const { hash } = revision;
  const matchExpressions = context.spec.selector.matchExpressions;
  const template = context.rollout.spec.template;
  const labels = { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const annotations: Record<string, string> = { [REVISION_ANNOTATION]: String(revision.number) };
  for (const key of REVISION_ORIGIN) {
    const value = context.rollout.metadata.annotations?.[key];
    if (value !== undefined) annotations[key] = value;
  }
  return {
    kind: 'createReplicaSet',
    name: replicaSetName(context.name, hash),
    podTemplateHash: hash,
    replicas,
    template: { ...template, metadata: { ...(template.metadata ?? {}), labels } },
    selector: {
      matchLabels: { ...(context.spec.selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash },
      ...(matchExpressions !== undefined && matchExpressions.length > 0
        ? { matchExpressions: structuredClone(matchExpressions) }
        : {}),
    },
    labels,
    annotations,
    minReadySeconds: context.spec.minReadySeconds,
  };
}
