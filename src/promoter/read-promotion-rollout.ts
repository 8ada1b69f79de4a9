// Reads what a promotion needs of a Rollout from the cluster: images, status, the commit it came from, its runs.
import { imagesOfTemplate } from '../promotion/git-rollout.ts';
import type { PromotionRollout } from '../promotion/promotable-revision.ts';
import type { ObservedRead } from '../reconciler/observed-state-reader.ts';
import { describeStep } from '../views/rollout-view.ts';
import { POD_TEMPLATE_HASH_LABEL, podTemplateHash, revisionHashOf } from '../rollout/index.ts';
import { COMMIT_ANNOTATION, SOURCE_LABEL } from '../sync/sync-labels.ts';

/** The promotion's view of an observed rollout, and the source it was synced from ('' when applied by hand). */
export function promotionRolloutOf(read: ObservedRead): { rollout: PromotionRollout; source: string } {
  const { rollout } = read.observed;
  const images = imagesOfTemplate(rollout.spec.template);
  const workloadRef = (read.raw.spec as { workloadRef?: unknown } | undefined)?.workloadRef !== undefined;
  return {
    source: rollout.metadata.labels?.[SOURCE_LABEL] ?? '',
    rollout: {
      namespace: rollout.metadata.namespace ?? 'default',
      name: rollout.metadata.name,
      steps: rollout.spec.strategy.canary?.steps?.length ?? 0,
      ...(rollout.metadata.generation !== undefined ? { generation: rollout.metadata.generation } : {}),
      images,
      status: rollout.status ?? {},
      commit: rollout.metadata.annotations?.[COMMIT_ANNOTATION] ?? '',
      runs: read.observed.analysisRuns.map((run) => ({
        podTemplateHash: run.labels[POD_TEMPLATE_HASH_LABEL] ?? '',
        phase: run.phase,
      })),
      // The revision the live template is, as the reconciler names it (the template read through workloadRef
      // too; a ReplicaSet Argo Rollouts left running it names it by Argo's hash).
      templateHash: revisionHashOf(rollout, read.observed.replicaSets),
      specHash: podTemplateHash(rollout.spec.template, rollout.status?.collisionCount),
      workloadRef,
    },
  };
}

/** The steps of the spec, described as `rollgate status` shows them. */
export function describeSteps(read: ObservedRead): string[] {
  const steps = (read.observed.rollout.spec.strategy.canary?.steps ?? []) as Array<Record<string, unknown>>;
  return steps.map(describeStep);
}
