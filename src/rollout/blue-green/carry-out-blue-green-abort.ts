// Blue-green sub-step: an abort already recorded is carried out: the active Service back on stable first.
import { abortedByDeadline } from '../sub-steps/record-abort.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';
import { amend, event, scale, type Pass } from '../pass/pass.ts';
import type { RolloutAction } from '../rollout-action.ts';
import { countOf } from '../replica-sets.ts';
import {
  activeHashOf,
  blueGreenOf,
  blueGreenStatus,
  selectedHash,
  stableHashOf,
  stableOf,
} from './blue-green-view.ts';
import { oldBlueGreenWrites } from './old-replica-sets.ts';

function patch(pass: Pass, service: string, hash: string): RolloutAction[] {
  const observed = pass.context.observed.services.find((candidate) => candidate.name === service);
  if (observed === undefined) return [];
  return [
    {
      kind: 'patchServiceSelector',
      service,
      resourceVersion: observed.resourceVersion,
      podTemplateHash: hash,
    },
  ];
}

/**
 * Every run stops. If the active Service left the stable (a post-promotion failure), it goes back first,
 * in a pass of its own, and only onto a stable with available pods (else the stable is scaled up and the
 * switch waits). Then the stable is held at spec.replicas, the preview Service returns to it, and the
 * aborted ReplicaSet keeps its pods for abortScaleDownDelaySeconds from the recorded abort, then goes to 0.
 */
export function carryOutBlueGreenAbort(pass: Pass): Pass {
  if (!pass.state.abort) return pass;
  const { context, revision } = pass;
  const { now, replicas } = context;
  const blueGreen = blueGreenOf(pass);
  const stable = stableOf(pass);
  const stableHash = stableHashOf(pass);
  const stopped = stopUnwantedRuns(amend(pass, { findings: { wantedRuns: [] } }));
  const abortedAtMs = Date.parse(pass.state.abortedAt ?? '');
  const scaleDownAt =
    (Number.isNaN(abortedAtMs) ? now.getTime() : abortedAtMs) + blueGreen.abortScaleDownDelaySeconds * 1000;
  const actions: RolloutAction[] = [];
  const events = [];
  if (activeHashOf(pass) !== stableHash && activeHashOf(pass) !== undefined) {
    if (countOf(stable).available > 0) {
      actions.push(...patch(pass, blueGreen.activeService, stableHash));
      events.push(
        event(
          'Warning',
          'ActiveServiceReverted',
          `Active Service ${blueGreen.activeService} back on ${stableHash}`,
        ),
      );
    } else if (stable.replicas < replicas) {
      actions.push(scale(stable, replicas));
    }
  } else {
    if (stable.replicas < replicas) actions.push(scale(stable, replicas));
    if (blueGreen.previewService !== undefined && selectedHash(pass, blueGreen.previewService) !== stableHash)
      actions.push(...patch(pass, blueGreen.previewService, stableHash));
    const rs = revision.current;
    if (rs !== undefined && rs.replicas > 0 && now.getTime() >= scaleDownAt) actions.push(scale(rs, 0));
    const old = oldBlueGreenWrites(pass);
    actions.push(...old.actions);
    events.push(...old.events);
  }
  const live = context.status;
  const next = amend(stopped, {
    actions,
    events,
    wakeAtMs: [now.getTime() < scaleDownAt ? scaleDownAt : undefined],
  });
  return amend(next, {
    verdict: {
      phase: 'Degraded',
      message: live.message ?? `RolloutAborted: Rollout aborted update to revision ${revision.number}`,
      aborted: true,
      deadlineExceeded: abortedByDeadline(live.message),
      paused: false,
      completed: false,
      stableHash,
      weights: 'keep',
      blueGreen: blueGreenStatus(next, false),
    },
  });
}
