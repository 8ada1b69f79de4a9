// evictPod: a policy/v1 Eviction for a restart, so PodDisruptionBudgets are honoured.
import type { EvictPodAction } from '../../rollout/index.ts';
import {
  KubeConflictError,
  KubeThrottledError,
  isNotFound,
  kubeCall,
  type KubeRequestContext,
} from '../errors.ts';
import type { ActionHandler } from './action-handler.ts';

/**
 * Evicts the pod (precondition: its uid). Gone or replaced meanwhile is `unchanged`; a refusal by a
 * disruption budget (429) is `failed` without stopping the pass: the pod is tried on a later pass.
 */
export const evictPod: ActionHandler<EvictPodAction> = async (
  action,
  { clients, read, namespace, logger },
) => {
  const target = action.name;
  const request: KubeRequestContext = {
    verb: 'create',
    kind: 'Pod',
    namespace,
    name: action.name,
    subresource: 'eviction',
  };
  try {
    await kubeCall(request, () =>
      clients.core.createNamespacedPodEviction({
        namespace,
        name: action.name,
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: action.name, namespace },
          ...(action.uid !== undefined ? { deleteOptions: { preconditions: { uid: action.uid } } } : {}),
        },
      }),
    );
    return { target, result: 'deleted' };
  } catch (err) {
    // Gone, or replaced by another pod of the same name (uid precondition): nothing left to restart.
    if (isNotFound(err) || err instanceof KubeConflictError) return { target, result: 'unchanged' };
    // A PodDisruptionBudget said not now: the restart waits and the pod is tried on a later pass.
    if (err instanceof KubeThrottledError) {
      logger.info(
        { rollout: read.observed.rollout.metadata.name, pod: action.name, reason: err.message },
        'eviction refused by a disruption budget; restart waits',
      );
      return { target, result: 'failed' };
    }
    throw err;
  }
};
