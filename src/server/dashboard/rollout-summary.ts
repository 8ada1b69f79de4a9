// One row of the dashboard's rollout list: the CLI's list row plus images, weights, Git origin and age.
import { COMMIT_ANNOTATION, COMMIT_AUTHOR_ANNOTATION, SOURCE_LABEL } from '../../sync/sync-labels.ts';
import { rolloutListRow, type RolloutListRow } from '../../views/rollout-tree.ts';
import type { Rollout } from '../../manifest/rollout.ts';

/** A ReplicaSet as far as the list needs it: whose it is, its revision hash and its images. */
export interface ReplicaSetImages {
  namespace: string;
  owner: string;
  /** The owning Rollout's uid: a name may be a Rollout in each group, each with its own ReplicaSets. */
  ownerUid?: string;
  podTemplateHash: string;
  images: string[];
}

/** What GET /api/v1/rollouts returns per Rollout and each server-sent event carries. */
export interface RolloutSummary extends RolloutListRow {
  /** The cluster it runs in (the dashboard's reads and events name it; `in-cluster` unless renamed). */
  cluster?: string;
  /** Canary steps: the index reached and the count (absent for blue-green or no steps). */
  stepIndex?: number;
  stepCount?: number;
  /** The weight the router was last set to (canary only). */
  actualWeight?: number;
  paused: boolean;
  aborted: boolean;
  message?: string;
  images: { stable: string[]; canary: string[] };
  /** The source (rollgate.dev/source label) and commit (rollgate.dev/commit annotation) it was applied from. */
  source?: string;
  commit?: string;
  /** Who wrote that commit (rollgate.dev/commit-author: `Name <email>`). */
  author?: string;
  createdAt?: string;
}

function templateImages(template: unknown): string[] {
  const containers = (template as { spec?: { containers?: Array<{ image?: unknown }> } } | undefined)?.spec
    ?.containers;
  return (containers ?? []).map((c) => c.image).filter((image): image is string => typeof image === 'string');
}

/** Builds the summary (pure): `replicaSets` may hold any namespace's, only this rollout's are used. */
export function summarizeRollout(rollout: Rollout, replicaSets: readonly ReplicaSetImages[]): RolloutSummary {
  const row = rolloutListRow(rollout);
  const status = rollout.status ?? {};
  const uid = rollout.metadata.uid;
  const own = replicaSets.filter(
    (rs) =>
      rs.namespace === row.namespace &&
      rs.owner === row.name &&
      (uid === undefined || rs.ownerUid === undefined || rs.ownerUid === uid),
  );
  const imagesOf = (hash: string | undefined): string[] =>
    hash === undefined ? [] : (own.find((rs) => rs.podTemplateHash === hash)?.images ?? []);
  const stable = imagesOf(status.stableRS);
  const promoted = status.stableRS !== undefined && status.stableRS === status.currentPodHash;
  // Before the first ReplicaSet exists, the template is what the canary will run.
  const canary = promoted
    ? []
    : status.currentPodHash !== undefined && imagesOf(status.currentPodHash).length > 0
      ? imagesOf(status.currentPodHash)
      : stable.length > 0 && stable.join() === templateImages(rollout.spec.template).join()
        ? []
        : templateImages(rollout.spec.template);
  const summary: RolloutSummary = {
    ...row,
    paused: rollout.spec.paused === true || (status.pauseConditions ?? []).length > 0,
    aborted: status.abort === true,
    images: { stable, canary },
  };
  const steps = rollout.spec.strategy.canary?.steps ?? [];
  if (row.strategy === 'Canary') {
    if (steps.length > 0) {
      summary.stepIndex = Math.min(status.currentStepIndex ?? 0, steps.length);
      summary.stepCount = steps.length;
    }
    summary.actualWeight = promoted ? 100 : (status.canary?.weights?.canary.weight ?? 0);
  }
  if (status.message) summary.message = status.message;
  const source = rollout.metadata.labels?.[SOURCE_LABEL];
  if (source !== undefined) summary.source = source;
  const commit = rollout.metadata.annotations?.[COMMIT_ANNOTATION];
  if (commit !== undefined) summary.commit = commit;
  const author = rollout.metadata.annotations?.[COMMIT_AUTHOR_ANNOTATION];
  if (author !== undefined) summary.author = author;
  if (rollout.metadata.creationTimestamp !== undefined)
    summary.createdAt = rollout.metadata.creationTimestamp;
  return summary;
}
