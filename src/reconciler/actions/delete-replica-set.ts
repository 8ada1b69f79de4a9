// deleteReplicaSet: an old ReplicaSet beyond the history limit, with a resourceVersion precondition.
import type { DeleteReplicaSetAction } from '../../rollout/index.ts';
import { isNotFound, kubeCall } from '../../kube/errors.ts';
import type { ActionHandler } from './action-handler.ts';

/** Deletes the ReplicaSet (background propagation); one already gone is `unchanged`. */
export const deleteReplicaSet: ActionHandler<DeleteReplicaSetAction> = async (
  action,
  { clients, namespace },
) => {
  const target = action.name;
  try {
    await kubeCall({ verb: 'delete', kind: 'ReplicaSet', namespace, name: action.name }, () =>
      clients.apps.deleteNamespacedReplicaSet({
        namespace,
        name: action.name,
        propagationPolicy: 'Background',
        body: { preconditions: { resourceVersion: action.resourceVersion } },
      }),
    );
    return {
      target,
      result: 'deleted',
      written: { kind: 'ReplicaSet', namespace, name: action.name, deleted: true },
    };
  } catch (err) {
    if (isNotFound(err)) return { target, result: 'unchanged' };
    throw err;
  }
};
