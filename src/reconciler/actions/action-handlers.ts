// The executor's table: one handler per action kind. A new kind is a new file and a row here.
import type { RolloutAction } from '../../rollout/index.ts';
import type { ActionContext, ActionHandler, ActionHandlers, HandledAction } from './action-handler.ts';
import { createAnalysisRun } from './create-analysis-run.ts';
import { createReplicaSet } from './create-replica-set.ts';
import { deleteAnalysisRun } from './delete-analysis-run.ts';
import { deleteReplicaSet } from './delete-replica-set.ts';
import { emitEvent } from './emit-event.ts';
import { evictPod } from './evict-pod.ts';
import { patchPodMetadata } from './patch-pod-metadata.ts';
import { patchServiceSelector } from './patch-service-selector.ts';
import { scaleDeployment } from './scale-deployment.ts';
import { scaleReplicaSet } from './scale-replica-set.ts';
import { setHeaderRoute, setMirrorRoute } from './set-managed-route.ts';
import { setReplicaSetPodMetadata } from './set-replica-set-pod-metadata.ts';
import { reassertTrafficWeights, setTrafficWeights } from './set-traffic-weights.ts';
import { terminateAnalysisRun } from './terminate-analysis-run.ts';

/** Every action kind's handler (the type makes a missing kind a compile error). */
export const ACTION_HANDLERS: ActionHandlers = {
  createReplicaSet,
  scaleReplicaSet,
  deleteReplicaSet,
  setTrafficWeights,
  reassertTrafficWeights,
  setHeaderRoute,
  setMirrorRoute,
  patchServiceSelector,
  createAnalysisRun,
  terminateAnalysisRun,
  deleteAnalysisRun,
  evictPod,
  scaleDeployment,
  setReplicaSetPodMetadata,
  patchPodMetadata,
  emitEvent,
};

/** Runs `action` through its kind's handler. */
export function handleAction<A extends RolloutAction>(
  action: A,
  context: ActionContext,
): Promise<HandledAction> {
  // The table is indexed by the action's own kind, so its handler takes exactly this action.
  const handler = ACTION_HANDLERS[action.kind] as ActionHandler<A>;
  return handler(action, context);
}
