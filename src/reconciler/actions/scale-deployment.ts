// scaleDeployment: spec.replicas of the workloadRef Deployment, conditional on the resourceVersion the plan read.
import type { ScaleDeploymentAction } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { KubeConflictError, kubeCall, type KubeRequestContext } from '../../kube/errors.ts';
import type { ActionHandler } from './action-handler.ts';

/**
 * Merge-patches spec.replicas carrying the resourceVersion the plan was made from, so a Deployment a user
 * or Git changed since the read is a conflict (re-read, re-plan) instead of being overwritten. Only the
 * replicas are written: the template stays the user's.
 */
export const scaleDeployment: ActionHandler<ScaleDeploymentAction> = async (
  action,
  { clients, read, namespace },
) => {
  const target = `deployment/${action.name}`;
  const request: KubeRequestContext = { verb: 'patch', kind: 'Deployment', namespace, name: action.name };
  const live = read.observed.workload;
  if (
    live?.state !== 'resolved' ||
    live.name !== action.name ||
    live.resourceVersion !== action.resourceVersion
  )
    throw new KubeConflictError(
      `${action.name} changed since the plan was made`,
      request,
      undefined,
      'Stale',
    );
  if (live.replicas === action.replicas) return { target, result: 'unchanged' };
  await kubeCall(request, () =>
    clients.apps.patchNamespacedDeployment(
      {
        namespace,
        name: action.name,
        fieldManager: FIELD_MANAGER,
        body: { metadata: { resourceVersion: action.resourceVersion }, spec: { replicas: action.replicas } },
      },
      MERGE_PATCH,
    ),
  );
  return { target, result: 'updated' };
};
