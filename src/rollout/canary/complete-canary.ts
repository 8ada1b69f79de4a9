// Canary sub-step: past the last step with the canary fully available, the canary becomes the stable.
import { parseDeadline, deadlineValue } from '../plan-scale-down.ts';
import type { DesiredTraffic } from '../plan-traffic.ts';
import { amend, event, type Pass } from '../pass/pass.ts';
import { routerErrorOf } from '../pass/finish-pass.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION, type RolloutAction } from '../rollout-action.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';
import { managedRouteRemovals } from '../sub-steps/remove-managed-routes.ts';
import {
  canaryReached,
  countsAt,
  draining,
  stableHashOf,
  stableOf,
  targetIndex,
  trafficHolds,
  trafficWrites,
} from './canary-view.ts';
import { fullWeightOf } from '../rollout-context.ts';

/**
 * Without a router, always; with one, once status records that the router sends all traffic to the
 * canary (sent only when its pods are available, see safeWeightAt): the stable Service may then switch.
 */
function routedToCanary(pass: Pass): boolean {
  const { context, revision } = pass;
  if (context.router === undefined) return true;
  return trafficHolds(pass, {
    canaryWeight: fullWeightOf(context),
    stableHash: stableHashOf(pass),
    canaryHash: revision.hash,
  });
}

/**
 * Completes the update when the steps are done (or promoted in full), no superseded canary is still
 * draining, and the canary runs spec.replicas available pods (or as many as canary.replicaProgressThreshold
 * asks; the rest may still be starting, as in Argo): status.stableRS becomes the canary's hash,
 * traffic goes 100 % to it, every run stops, and the old stable is dated for scale-down
 * (scaleDownDelaySeconds from now, written in the same write as its scale, F3). Without a router the
 * delay defaults to 0, so the old stable goes on the next pass: its pods sit behind the same Service.
 * With a router it completes only once the router holds all traffic on the canary; the same pass then
 * points the stable Service at the new hash and, after that write, the router back at the stable Service
 * (weight 0 to canary, stable = the new hash), as Argo after a promotion.
 */
export function completeCanary(pass: Pass): Pass {
  const { context, revision } = pass;
  const { now, replicas, steps } = context;
  const rs = revision.current;
  if (
    targetIndex(pass) < steps.length ||
    draining(pass) ||
    rs === undefined ||
    rs.replicas !== replicas ||
    countsAt(pass, steps.length).target.canary !== replicas ||
    !canaryReached(pass, replicas) ||
    !routedToCanary(pass)
  )
    return pass;
  const stable = stableOf(pass);
  const actions: RolloutAction[] = [];
  const wakeAtMs: number[] = [];
  if (stable.replicas > 0) {
    const existing = parseDeadline(stable.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]);
    if (existing === undefined || existing <= now.getTime()) {
      // scaleDownDelayRevisionLimit 0: no old ReplicaSet waits out a delay.
      const { scaleDownDelaySeconds, scaleDownDelayRevisionLimit } = context.canary;
      const at = now.getTime() + (scaleDownDelayRevisionLimit === 0 ? 0 : scaleDownDelaySeconds * 1000);
      actions.push({
        kind: 'scaleReplicaSet',
        name: stable.name,
        resourceVersion: stable.resourceVersion,
        replicas: stable.replicas,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: deadlineValue(stable.name, at) },
      });
      wakeAtMs.push(at);
    } else {
      wakeAtMs.push(existing);
    }
  }
  const desired: DesiredTraffic = { canaryWeight: 0, stableHash: revision.hash };
  const traffic = trafficWrites(pass, desired);
  const stopped = stopUnwantedRuns(amend(pass, { findings: { wantedRuns: [] } }));
  const routes = managedRouteRemovals(pass);
  return amend(stopped, {
    actions: [...actions, ...traffic, ...routes.actions],
    wakeAtMs,
    state: {
      stepIndex: steps.length,
      pauseConditions: [],
      controllerPause: false,
      promoteFull: false,
      progress: undefined,
      ...routes.state,
    },
    findings: { deadlineWakeAtMs: undefined },
    events: [
      event(
        'Normal',
        'RolloutCompleted',
        `Rollout completed update to revision ${revision.number} (${revision.hash}; previous stable ${stableHashOf(pass)})`,
      ),
    ],
    verdict: {
      phase: 'Healthy',
      message: '',
      aborted: false,
      deadlineExceeded: false,
      paused: false,
      completed: true,
      stableHash: revision.hash,
      weights: traffic.length === 0 || routerErrorOf(context) === undefined ? desired : 'keep',
    },
  });
}
