// setTrafficWeights and reassertTrafficWeights: tell the traffic router the weights; a router failure is reported, never allowed to stop the pass.
import type { ReassertTrafficWeightsAction, SetTrafficWeightsAction } from '../../rollout/index.ts';
import type { ActionContext, ActionHandler, HandledAction } from './action-handler.ts';

/** The Event reason of a route put back to Rollgate's weights after someone edited it. */
export const TRAFFIC_DRIFT_CORRECTED = 'TrafficDriftCorrected';

function rolloutRef(context: ActionContext) {
  const rollout = context.read.observed.rollout;
  return {
    apiVersion: context.api.apiVersion,
    kind: 'Rollout',
    namespace: context.namespace,
    name: rollout.metadata.name,
    uid: rollout.metadata.uid,
  };
}

/**
 * Calls the router; `reassert`: the weights were already in force, so any route it had to change
 * was edited by someone else since (drift), which is logged and recorded as a Warning Event.
 */
async function sendWeights(
  action: SetTrafficWeightsAction | ReassertTrafficWeightsAction,
  context: ActionContext,
  reassert: boolean,
): Promise<HandledAction> {
  const { router, read, namespace, logger, events } = context;
  const target = `${action.canaryWeight}%`;
  if (router === undefined) return { target, result: 'unchanged' };
  const rollout = read.observed.rollout;
  const canary = rollout.spec.strategy.canary;
  try {
    const sent = await router.setWeights({
      namespace,
      rollout: rollout.metadata.name,
      canaryWeight: action.canaryWeight,
      stableHash: action.stableHash,
      canaryHash: action.canaryHash,
      additional: action.additional,
      // Ping-pong: the Services in the roles the plan gives them (they swap in the promotion's pass).
      canaryService: action.services?.canaryService ?? canary?.canaryService,
      stableService: action.services?.stableService ?? canary?.stableService,
    });
    const changed = sent ? sent.changed : [];
    if (!reassert || changed.length === 0) return { target, result: 'unchanged' };
    const weights = `canary ${action.canaryHash === undefined ? 0 : action.canaryWeight}`;
    const message = `${changed.join(', ')}: weights edited outside Rollgate; set back to Rollgate's (${weights})`;
    logger.warn({ rollout: rollout.metadata.name, routes: changed }, message);
    await events.record(rolloutRef(context), { type: 'Warning', reason: TRAFFIC_DRIFT_CORRECTED, message });
    return { target, result: 'updated' };
  } catch (err) {
    logger.warn({ err, rollout: rollout.metadata.name }, 'traffic router failed');
    const message = err instanceof Error ? err.message : String(err);
    await events.record(rolloutRef(context), { type: 'Warning', reason: 'TrafficRoutingError', message });
    return { target, result: 'failed', routerError: message };
  }
}

/**
 * Calls the router (none configured: nothing to do, the replica split is the weight). A failure is
 * returned as `failed` with `routerError`: the executor records it in the status it writes, so the
 * planner sees it on the next pass and it never blocks the rest of the plan (an abort above all). The
 * failure is also a Warning Event on the Rollout (`TrafficRoutingError`; a repeat bumps its count).
 */
export const setTrafficWeights: ActionHandler<SetTrafficWeightsAction> = (action, context) =>
  sendWeights(action, context, false);

/**
 * Sends the weights the planner holds on a pass at rest (the ones status records): a route someone edited
 * by hand goes back to them (`updated`, with a `TrafficDriftCorrected` Event); otherwise the router writes
 * nothing and the result is `unchanged`. A failure is reported as for setTrafficWeights.
 */
export const reassertTrafficWeights: ActionHandler<ReassertTrafficWeightsAction> = (action, context) =>
  sendWeights(action, context, true);
