// Reads what a promotion needs of a Rollout from the cluster: images, status, the commit it came from, its runs.
import type { PromotionRollout } from '../promotion/promotable-revision.ts';
import type { ObservedRead } from '../kube/observed-state-reader.ts';

/** rollgate.dev/commit and rollgate.dev/source, as sync writes them (see src/sync/sync-labels.ts). */
const COMMIT_ANNOTATION = 'rollgate.dev/commit';
const SOURCE_LABEL = 'rollgate.dev/source';
const HASH_LABEL = 'rollouts-pod-template-hash';

/** The promotion's view of an observed rollout, and the source it was synced from ('' when applied by hand). */
export function promotionRolloutOf(read: ObservedRead): { rollout: PromotionRollout; source: string } {
  const { rollout } = read.observed;
  const spec = rollout.spec.template.spec as {
    containers?: Array<{ name?: string; image?: string }>;
    initContainers?: Array<{ name?: string; image?: string }>;
  };
  const images = [...(spec.containers ?? []), ...(spec.initContainers ?? [])]
    .filter(
      (c): c is { name: string; image: string } => typeof c.name === 'string' && typeof c.image === 'string',
    )
    .map((c) => ({ container: c.name, image: c.image }));
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
        podTemplateHash: run.labels[HASH_LABEL] ?? '',
        phase: run.phase,
      })),
    },
  };
}

/** The steps of the spec, described as the pull request body lists them. */
export function describeSteps(read: ObservedRead): string[] {
  const steps = (read.observed.rollout.spec.strategy.canary?.steps ?? []) as Array<Record<string, unknown>>;
  return steps.map((step) => {
    if (step.setWeight !== undefined) return `setWeight ${String(step.setWeight)}`;
    if (step.pause !== undefined) {
      const duration = (step.pause as { duration?: unknown } | null)?.duration;
      return duration === undefined ? 'pause' : `pause ${String(duration)}`;
    }
    if (step.analysis !== undefined) return 'analysis';
    return Object.keys(step)[0] ?? 'step';
  });
}
