// Which built-in triggers a pass fired: a pure comparison of the Rollout status before and after it.
import type { RolloutStatus } from '../manifest/rollout.ts';

/** Argo Rollouts' trigger names (one per controller event), plus Rollgate's promotion triggers. */
export const BUILTIN_TRIGGERS = [
  'on-rollout-updated',
  'on-rollout-step-completed',
  'on-rollout-paused',
  'on-rollout-completed',
  'on-rollout-aborted',
  'on-analysis-run-running',
  'on-analysis-run-error',
  'on-analysis-run-failed',
  'on-scaling-replica-set',
  'on-promotion-pr-opened',
  'on-promotion-merged',
] as const;
export type BuiltinTrigger = (typeof BUILTIN_TRIGGERS)[number];

export function isBuiltinTrigger(name: string): name is BuiltinTrigger {
  return (BUILTIN_TRIGGERS as readonly string[]).includes(name);
}

/**
 * One trigger that fired. `revision` (the pod-template hash) and `step` pin the transition: together with
 * the Rollout's uid and the trigger they are the delivery key, so the same transition seen twice (two
 * processes, a restart) is one notification.
 */
export interface NotificationIntent {
  trigger: BuiltinTrigger;
  revision: string;
  step: string;
}

/** A ReplicaSet the pass scaled (an executed scaleReplicaSet that changed something). */
export interface ScaledReplicaSet {
  name: string;
  replicas: number;
}

type Status = Partial<RolloutStatus> & Record<string, unknown>;

interface AnalysisRunRef {
  name: string;
  status: string;
}

const RUN_TRIGGERS: Record<string, BuiltinTrigger> = {
  Running: 'on-analysis-run-running',
  Error: 'on-analysis-run-error',
  Failed: 'on-analysis-run-failed',
};

/** The AnalysisRuns a status points at: canary step and background runs, blue-green pre/post promotion runs. */
function runsOf(status: Status): AnalysisRunRef[] {
  const blueGreen = (status.blueGreen ?? {}) as Record<string, unknown>;
  const refs = [
    status.canary?.currentStepAnalysisRunStatus,
    status.canary?.currentBackgroundAnalysisRunStatus,
    blueGreen.prePromotionAnalysisRunStatus,
    blueGreen.postPromotionAnalysisRunStatus,
  ];
  return refs.flatMap((ref) => {
    const r = ref as { name?: unknown; status?: unknown } | undefined;
    return typeof r?.name === 'string' && typeof r.status === 'string'
      ? [{ name: r.name, status: r.status }]
      : [];
  });
}

/**
 * Compares the status read before a pass with the status it wrote, and returns the built-in triggers
 * that fired, as Argo's controller emits its events:
 * - on-rollout-updated: a new revision (`currentPodHash` changed);
 * - on-rollout-step-completed: `currentStepIndex` moved forward within a revision (one per step passed);
 * - on-rollout-paused: the phase became Paused;
 * - on-rollout-completed: the stable revision became the current one (`stableRS` moved to `currentPodHash`);
 * - on-rollout-aborted: `abort` became true;
 * - on-analysis-run-running / -error / -failed: an AnalysisRun the status points at entered that phase;
 * - on-scaling-replica-set: the pass scaled a ReplicaSet (`scaled`, from the executed actions).
 * Nothing here reads a clock or the cluster: same input, same intents.
 */
export function detectTransitions(
  before: Status | undefined,
  after: Status,
  scaled: readonly ScaledReplicaSet[] = [],
): NotificationIntent[] {
  const was: Status = before ?? {};
  const revision = after.currentPodHash ?? '';
  const stepOf = (status: Status): string =>
    status.currentStepIndex === undefined ? '-' : String(status.currentStepIndex);
  const intents: NotificationIntent[] = [];
  const fire = (trigger: BuiltinTrigger, step: string): void => {
    intents.push({ trigger, revision, step });
  };

  if (after.currentPodHash !== undefined && after.currentPodHash !== was.currentPodHash)
    fire('on-rollout-updated', '-');
  if (
    after.currentPodHash === was.currentPodHash &&
    after.currentStepIndex !== undefined &&
    was.currentStepIndex !== undefined
  )
    for (let step = was.currentStepIndex; step < after.currentStepIndex; step++)
      fire('on-rollout-step-completed', String(step));
  if (after.phase === 'Paused' && was.phase !== 'Paused') fire('on-rollout-paused', stepOf(after));
  if (
    after.stableRS !== undefined &&
    after.stableRS === after.currentPodHash &&
    (was.stableRS !== after.stableRS || was.currentPodHash !== after.currentPodHash)
  )
    fire('on-rollout-completed', '-');
  if (after.abort === true && was.abort !== true) fire('on-rollout-aborted', stepOf(after));

  const previous = new Map(runsOf(was).map((r) => [r.name, r.status]));
  for (const run of runsOf(after)) {
    const trigger = RUN_TRIGGERS[run.status];
    if (trigger !== undefined && previous.get(run.name) !== run.status) fire(trigger, run.name);
  }
  for (const rs of scaled) fire('on-scaling-replica-set', `${rs.name}=${rs.replicas}`);
  return intents;
}
