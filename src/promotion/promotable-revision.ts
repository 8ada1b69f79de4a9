// Which revision of a Rollout may be promoted: one that finished a healthy canary, and nothing else.
import type { RolloutStatus } from '../manifest/rollout.ts';

/** An AnalysisRun of the rollout as the promotion sees it. */
export interface RunOutcome {
  /** The run's revision (its rollouts-pod-template-hash label). */
  podTemplateHash: string;
  phase: string;
}

/** The parts of a Rollout in the `from` source the promotion reads. */
export interface PromotionRollout {
  namespace: string;
  name: string;
  /** Number of canary steps in the spec. */
  steps: number;
  /** metadata.generation: the status describes this spec only when its observedGeneration equals it. */
  generation?: number;
  /** Container images of spec.template (containers and initContainers), by container name. */
  images: Array<{ container: string; image: string }>;
  status: RolloutStatus;
  /** The Git commit the Rollout was applied from (annotation rollgate.dev/commit), '' when unknown. */
  commit: string;
  /** Its AnalysisRuns (any revision). */
  runs: RunOutcome[];
  /**
   * The revision the live pod template is, as the reconciler names it (the hash with the status' collision
   * count, or the hash of the ReplicaSet that runs it under another, adopted from Argo Rollouts).
   */
  templateHash?: string;
  /** The live pod template hashed as Git's is (differs from `templateHash` only for an adopted revision). */
  specHash?: string;
  /** The pod template is read from a Deployment the Rollout references (`spec.workloadRef`). */
  workloadRef?: boolean;
}

/** Why a revision is (not) promotable, for status and logs. */
export type Promotability =
  { promotable: true; hash: string } | { promotable: false; hash?: string; reason: string; aborted: boolean };

const BAD_RUN = new Set(['Failed', 'Error', 'Inconclusive']);

/**
 * A revision is promotable when its canary finished healthy: phase Healthy, the current revision is the
 * stable one, every step done, never aborted, and none of its AnalysisRuns Failed, Error or Inconclusive.
 * A revision being rolled out, paused, or aborted is not.
 */
export function promotability(rollout: PromotionRollout): Promotability {
  const { status } = rollout;
  const hash = status.currentPodHash;
  if (hash === undefined || hash === '')
    return { promotable: false, reason: 'not reconciled yet', aborted: false };
  // The spec moved on (a new template synced) and the status still speaks of the previous one: its images
  // are not the ones that finished the canary.
  if (rollout.generation !== undefined && status.observedGeneration !== String(rollout.generation))
    return {
      promotable: false,
      hash,
      reason: 'the status does not describe the current spec yet',
      aborted: false,
    };
  if (status.abort === true || (status.message ?? '').startsWith('RolloutAborted'))
    return { promotable: false, hash, reason: `revision ${hash} was aborted`, aborted: true };
  if (status.phase !== 'Healthy')
    return {
      promotable: false,
      hash,
      reason: `revision ${hash} is ${status.phase ?? 'unknown'}`,
      aborted: false,
    };
  if (status.stableRS !== hash)
    return { promotable: false, hash, reason: `revision ${hash} is not stable yet`, aborted: false };
  if (rollout.steps > 0 && (status.currentStepIndex ?? 0) < rollout.steps)
    return { promotable: false, hash, reason: `revision ${hash} has steps left`, aborted: false };
  const bad = rollout.runs.find((run) => run.podTemplateHash === hash && BAD_RUN.has(run.phase));
  if (bad !== undefined)
    return {
      promotable: false,
      hash,
      reason: `revision ${hash} has an ${bad.phase} AnalysisRun`,
      aborted: false,
    };
  return { promotable: true, hash };
}
