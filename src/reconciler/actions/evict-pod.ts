// evictPod: a policy/v1 Eviction (policy/v1beta1 before Kubernetes 1.22) for a restart, so PodDisruptionBudgets are honoured.
import type { EvictPodAction } from '../../rollout/index.ts';
import {
  KubeConflictError,
  KubeInvalidError,
  KubeThrottledError,
  isNotFound,
  kubeCall,
  type KubeRequestContext,
} from '../../kube/errors.ts';
import type { ActionHandler } from './action-handler.ts';

type EvictionVersion = 'policy/v1' | 'policy/v1beta1';

/** The Eviction version each API server (by URL) takes, once one refused policy/v1. */
const evictionVersionOf = new Map<string, EvictionVersion>();

/**
 * The refusal of an API server that does not know policy/v1 Eviction (before 1.22): 400 `no kind
 * "Eviction" is registered for version "policy/v1"`. Read from the message: it is the only sign, and
 * asking discovery first would cost every eviction on every newer server a request.
 */
function lacksPolicyV1(err: unknown): boolean {
  return (
    err instanceof KubeInvalidError &&
    err.status === 400 &&
    /no kind "Eviction" is registered for version "policy\/v1"/.test(err.message)
  );
}

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
  const server = clients.kubeConfig.getCurrentCluster()?.server ?? '';
  const evict = (apiVersion: EvictionVersion): Promise<unknown> =>
    kubeCall(request, () =>
      clients.core.createNamespacedPodEviction({
        namespace,
        name: action.name,
        body: {
          apiVersion,
          kind: 'Eviction',
          metadata: { name: action.name, namespace },
          ...(action.uid !== undefined ? { deleteOptions: { preconditions: { uid: action.uid } } } : {}),
        },
      }),
    );
  try {
    const version = evictionVersionOf.get(server) ?? 'policy/v1';
    try {
      await evict(version);
    } catch (err) {
      if (version !== 'policy/v1' || !lacksPolicyV1(err)) throw err;
      // Kubernetes before 1.22 serves policy/v1beta1 Evictions only: remembered for this server.
      evictionVersionOf.set(server, 'policy/v1beta1');
      logger.info(
        { server },
        'the API server has no policy/v1 Eviction (Kubernetes < 1.22); using policy/v1beta1',
      );
      await evict('policy/v1beta1');
    }
    return {
      target,
      result: 'deleted',
      written: { kind: 'Pod', namespace, name: action.name, deleted: true },
    };
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
