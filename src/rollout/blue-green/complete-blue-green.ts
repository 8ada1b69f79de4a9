// Blue-green sub-step: the switched revision becomes the stable; the previous one is dated for scale-down.
import { deadlineValue, parseDeadline } from '../plan-scale-down.ts';
import { amend, event, type Pass } from '../pass/pass.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION, type RolloutAction } from '../rollout-action.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';
import { blueGreenOf, blueGreenStatus, stableHashOf, stableOf, switched } from './blue-green-view.ts';

/** The previous stable's scale-down deadline (scaleDownDelaySeconds from now), written with its scale (F3). */
function dateOldStable(pass: Pass): { actions: RolloutAction[]; wakeAtMs: number[] } {
  const stable = stableOf(pass);
  const { now } = pass.context;
  if (stable.replicas === 0) return { actions: [], wakeAtMs: [] };
  const existing = parseDeadline(stable.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]);
  if (existing !== undefined && existing > now.getTime()) return { actions: [], wakeAtMs: [existing] };
  const { scaleDownDelaySeconds, scaleDownDelayRevisionLimit } = blueGreenOf(pass);
  // A revision limit of 0 keeps no old ReplicaSet up: the delay is over at once.
  const at = now.getTime() + (scaleDownDelayRevisionLimit === 0 ? 0 : scaleDownDelaySeconds * 1000);
  return {
    actions: [
      {
        kind: 'scaleReplicaSet',
        name: stable.name,
        resourceVersion: stable.resourceVersion,
        replicas: stable.replicas,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: deadlineValue(stable.name, at) },
      },
    ],
    wakeAtMs: [at],
  };
}

/**
 * After the switch, with the post-promotion analysis passed (or none): the revision becomes the stable
 * (phase Healthy, event RolloutCompleted), every run stops, pause conditions, controllerPause, promoteFull
 * and the progress window are cleared, status.blueGreen's checkpoint is dropped, and the previous stable
 * keeps its pods with a scale-down deadline scaleDownDelaySeconds from now (at once with a revision limit
 * of 0), written in the same write as its scale; the pass wakes when it is due. Ends the pass.
 */
export function completeBlueGreen(pass: Pass): Pass {
  if (!switched(pass)) return pass;
  const { revision } = pass;
  const dated = dateOldStable(pass);
  const done = stopUnwantedRuns(amend(pass, { findings: { wantedRuns: [] } }));
  const completed = amend(done, {
    actions: dated.actions,
    wakeAtMs: dated.wakeAtMs,
    state: { pauseConditions: [], controllerPause: false, promoteFull: false, progress: undefined },
    findings: { deadlineWakeAtMs: undefined },
    events: [
      event(
        'Normal',
        'RolloutCompleted',
        `Rollout completed update to revision ${revision.number} (${revision.hash}; previous stable ${stableHashOf(pass)})`,
      ),
    ],
  });
  return amend(completed, {
    verdict: {
      phase: 'Healthy',
      message: '',
      aborted: false,
      deadlineExceeded: false,
      paused: false,
      completed: true,
      stableHash: revision.hash,
      weights: 'keep',
      blueGreen: blueGreenStatus(completed, false),
    },
  });
}
