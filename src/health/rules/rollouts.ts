// Health rules for Rollouts and AnalysisRuns, in both groups (rollgate.dev and argoproj.io): the same status
// shape, written by Rollgate's planner or by Argo Rollouts. A Rollout is Healthy only once its update finished:
// the canary ran all its steps, or the blue-green active Service points at the new revision.
import {
  conditionOf,
  fieldAt,
  generationNotObserved,
  integerAt,
  recordAt,
  recordsAt,
  stringAt,
} from '../live-fields.ts';
import type { HealthRule, LiveObject, ObjectHealth } from '../object-health.ts';

function progressing(message: string): ObjectHealth {
  return { status: 'Progressing', message };
}

/** The controller has not caught up with the spec (or, with a workloadRef, with the referenced workload). */
function specNotObserved(live: LiveObject): string | undefined {
  const unobserved = generationNotObserved(live);
  if (unobserved !== undefined) return unobserved;
  if (fieldAt(live, 'spec', 'workloadRef') === undefined) return undefined;
  const workload = integerAt(live, 'metadata', 'annotations', 'rollout.argoproj.io/workload-generation');
  const observed = integerAt(live, 'status', 'workloadObservedGeneration');
  if (workload === undefined && observed === undefined) return undefined;
  return workload === observed
    ? undefined
    : `waiting for the controller to observe generation ${workload ?? '?'} of the referenced workload`;
}

/** Why the update has not finished yet (the new revision not yet the stable or active one), or undefined. */
function unfinished(live: LiveObject): string | undefined {
  const current = stringAt(live, 'status', 'currentPodHash');
  if (current === undefined) return 'waiting for the controller to report the current revision';
  if (recordAt(live, 'spec', 'strategy', 'blueGreen') !== undefined) {
    if (stringAt(live, 'status', 'blueGreen', 'activeSelector') !== current)
      return 'waiting for the active Service to switch to the new revision';
    return undefined;
  }
  const stable = stringAt(live, 'status', 'stableRS') ?? stringAt(live, 'status', 'canary', 'stableRS');
  return stable === current ? undefined : 'waiting for the canary to finish its steps';
}

/**
 * A Rollout without a phase (written by an Argo Rollouts before v1.0): its conditions, pause and replica
 * counts say what the phase would.
 */
function healthWithoutPhase(live: LiveObject): ObjectHealth {
  const invalid = conditionOf(live, 'InvalidSpec');
  if (invalid !== undefined) return { status: 'Degraded', message: invalid.message };
  const progress = conditionOf(live, 'Progressing');
  if (progress?.reason === 'RolloutAborted' || progress?.reason === 'ProgressDeadlineExceeded')
    return { status: 'Degraded', message: progress.message };
  if (recordsAt(live, 'status', 'pauseConditions').length > 0 || fieldAt(live, 'spec', 'paused') === true)
    return { status: 'Suspended', message: 'Rollout is paused' };
  if (stringAt(live, 'status', 'currentPodHash') === undefined)
    return progressing('waiting for the controller to report the current revision');
  const wanted = integerAt(live, 'spec', 'replicas') ?? 1;
  const replicas = integerAt(live, 'status', 'replicas') ?? 0;
  const updated = integerAt(live, 'status', 'updatedReplicas') ?? 0;
  const available = integerAt(live, 'status', 'availableReplicas') ?? 0;
  if (updated < wanted) return progressing(`${updated} of ${wanted} replicas updated`);
  if (available < updated) return progressing(`${available} of ${updated} updated replicas available`);
  if (recordAt(live, 'spec', 'strategy', 'canary') !== undefined && replicas > updated)
    return progressing(`${replicas - updated} old replicas pending termination`);
  const why = unfinished(live);
  return why === undefined ? { status: 'Healthy', message: '' } : progressing(why);
}

/** The phase the controller wrote, with Paused → Suspended and Healthy only for a finished update. */
export const rolloutHealth: HealthRule = (live) => {
  if (recordAt(live, 'status') === undefined)
    return progressing('waiting for the controller to write the first status');
  const unobserved = specNotObserved(live);
  if (unobserved !== undefined) return progressing(unobserved);
  const phase = stringAt(live, 'status', 'phase');
  const message = stringAt(live, 'status', 'message') ?? '';
  switch (phase) {
    case 'Paused':
      return { status: 'Suspended', message };
    case 'Degraded':
      return { status: 'Degraded', message };
    case 'Progressing':
      return { status: 'Progressing', message };
    case 'Healthy': {
      const why = unfinished(live);
      return why === undefined ? { status: 'Healthy', message } : progressing(why);
    }
    case undefined:
      return healthWithoutPhase(live);
    default:
      return { status: 'Unknown', message: `unknown phase ${phase}` };
  }
};

/** Successful → Healthy; Failed or Error → Degraded; Inconclusive → Unknown (a person decides); else running. */
export const analysisRunHealth: HealthRule = (live) => {
  const phase = stringAt(live, 'status', 'phase');
  const message = stringAt(live, 'status', 'message');
  switch (phase) {
    case 'Successful':
      return { status: 'Healthy', message: message ?? '' };
    case 'Failed':
      return { status: 'Degraded', message: message ?? 'analysis failed' };
    case 'Error':
      return { status: 'Degraded', message: message ?? 'analysis had an error' };
    case 'Inconclusive':
      return { status: 'Unknown', message: message ?? 'analysis was inconclusive' };
    default:
      return progressing('analysis is running');
  }
};

export const ROLLOUT_RULES: ReadonlyArray<readonly [string, HealthRule]> = [
  ['rollgate.dev/Rollout', rolloutHealth],
  ['argoproj.io/Rollout', rolloutHealth],
  ['rollgate.dev/AnalysisRun', analysisRunHealth],
  ['argoproj.io/AnalysisRun', analysisRunHealth],
];
