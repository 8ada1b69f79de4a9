// setTrafficWeights: tells the traffic router the weights; a router failure is reported, never allowed to stop the pass.
import type { SetTrafficWeightsAction } from '../../rollout/index.ts';
import { ROLLGATE_API_VERSION } from '../../spec/api-version.ts';
import type { ActionHandler } from './action-handler.ts';

/**
 * Calls the router (none configured: nothing to do, the replica split is the weight). A failure is
 * returned as `failed` with `routerError`: the executor records it in the status it writes, so the
 * planner sees it on the next pass and it never blocks the rest of the plan (an abort above all). The
 * failure is also a Warning Event on the Rollout (`TrafficRoutingError`; a repeat bumps its count).
 */
export const setTrafficWeights: ActionHandler<SetTrafficWeightsAction> = async (
  action,
  { router, read, namespace, logger, events },
) => {
  const target = `${action.canaryWeight}%`;
  if (router === undefined) return { target, result: 'unchanged' };
  const rollout = read.observed.rollout;
  const canary = rollout.spec.strategy.canary;
  try {
    await router.setWeights({
      namespace,
      rollout: rollout.metadata.name,
      canaryWeight: action.canaryWeight,
      stableHash: action.stableHash,
      canaryHash: action.canaryHash,
      canaryService: canary?.canaryService,
      stableService: canary?.stableService,
    });
    return { target, result: 'unchanged' };
  } catch (err) {
    logger.warn({ err, rollout: rollout.metadata.name }, 'traffic router failed');
    const message = err instanceof Error ? err.message : String(err);
    await events.record(
      {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Rollout',
        namespace,
        name: rollout.metadata.name,
        uid: rollout.metadata.uid,
      },
      { type: 'Warning', reason: 'TrafficRoutingError', message },
    );
    return { target, result: 'failed', routerError: message };
  }
};
