// The Experiment planner: (Experiment, observed, now) → actions, the next status, when to look again (pure).
import { lookAt, nextLook, type LookCandidate } from '../clock/next-look.ts';
import type { Experiment, ExperimentStatus } from '../manifest/experiment.ts';
import type { ExperimentAction } from './experiment-action.ts';
import { experimentConditions } from './experiment-conditions.ts';
import { durationEndMs, isCompletedPhase, isTerminating } from './experiment-lifecycle.ts';
import { runExperimentSubSteps, type ExperimentPass, type ExperimentSubStep } from './experiment-pass.ts';
import { judgeExperiment } from './judge-experiment.ts';
import type { ObservedExperiment } from './observed-experiment.ts';
import { reconcileAnalyses } from './reconcile-analyses.ts';
import { reconcileTemplates } from './reconcile-templates.ts';

/** How long to wait while a template's pods come up and nothing else is due (a watch normally wakes it sooner). */
export const EXPERIMENT_PODS_RESYNC_MS = 5_000;

/** The reasons the planner gives for looking again. */
export const EXPERIMENT_LOOK_REASONS = {
  timer: 'timer',
  duration: 'experiment duration',
  pods: 'waiting for pods',
  phaseRecorded: 'phase recorded',
} as const;

export interface ExperimentPlan {
  actions: ExperimentAction[];
  status: ExperimentStatus;
  requeueAfterMs?: number;
  requeueReason?: string;
}

/** The sub-steps of a pass, in order: templates, then analyses (which read the templates' ReplicaSets), then the verdict. */
export const EXPERIMENT_SUB_STEPS: readonly ExperimentSubStep[] = [
  reconcileTemplates,
  reconcileAnalyses,
  judgeExperiment,
];

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
}

/**
 * One pass over an Experiment. Everything it needs is in the Experiment's status (template statuses,
 * runs, availableAt), the observed ReplicaSets, Services and runs, and `now`; it remembers nothing else.
 * It looks again at the end of the duration, a template's progress deadline, a scale-down deadline,
 * while pods come up, and at once after the first pass (which only records Pending, as Argo's).
 */
export function planExperiment(
  experiment: Experiment,
  observed: ObservedExperiment,
  now: Date,
): ExperimentPlan {
  const first: ExperimentPass = {
    context: { experiment, observed, now, terminating: isTerminating(experiment, experiment.status) },
    status: { templateStatuses: [], analysisRuns: [] },
    actions: [],
    events: [],
    wakeAtMs: [],
  };
  const pass = runExperimentSubSteps(EXPERIMENT_SUB_STEPS, first);
  const { verdict } = pass;
  const live = experiment.status;
  const status = dropUndefined<ExperimentStatus>({
    ...live,
    phase: verdict.phase,
    message: verdict.message,
    templateStatuses: pass.status.templateStatuses,
    availableAt: verdict.availableAt,
    analysisRuns: pass.status.analysisRuns.length > 0 ? pass.status.analysisRuns : undefined,
    conditions: experimentConditions(
      experiment.metadata.name,
      live?.conditions,
      verdict.phase,
      verdict.availableAt,
      now,
    ),
  });
  if (verdict.message === undefined) delete status.message;
  const events = pass.events;
  const phaseChanged = live?.phase !== verdict.phase;
  const phaseEvents = phaseChanged
    ? [
        {
          kind: 'emitEvent' as const,
          type:
            verdict.phase === 'Failed' || verdict.phase === 'Error'
              ? ('Warning' as const)
              : ('Normal' as const),
          reason: `Experiment${verdict.phase}`,
          message: `Experiment transitioned from ${live?.phase ?? ''} -> ${verdict.phase}${verdict.message ? `: ${verdict.message}` : ''}`,
        },
      ]
    : [];

  const candidates: Array<LookCandidate | undefined> = pass.wakeAtMs.map((at) =>
    lookAt(at, now, EXPERIMENT_LOOK_REASONS.timer),
  );
  // A new phase (Pending first, availability, an ending) is planned on again at once: the next pass acts on it.
  if (phaseChanged || (verdict.availableAt !== undefined && live?.availableAt === undefined))
    candidates.unshift({ afterMs: 0, reason: EXPERIMENT_LOOK_REASONS.phaseRecorded });
  if (!isCompletedPhase(verdict.phase)) {
    const end = durationEndMs(experiment, verdict.availableAt);
    // Only passed strictly after the end: look just after it.
    if (end !== undefined) candidates.push(lookAt(end + 1, now, EXPERIMENT_LOOK_REASONS.duration));
  }
  const settling = observed.replicaSets.some(
    (rs) => rs.status.replicas !== rs.replicas || rs.status.availableReplicas < rs.replicas,
  );
  if (settling) candidates.push({ afterMs: EXPERIMENT_PODS_RESYNC_MS, reason: EXPERIMENT_LOOK_REASONS.pods });
  const look = nextLook(candidates);
  return {
    actions: [...pass.actions, ...events, ...phaseEvents],
    status,
    ...(look !== undefined && { requeueAfterMs: look.afterMs, requeueReason: look.reason }),
  };
}
