// setReplicaSetPodMetadata: a ReplicaSet's template gets the ephemeral metadata of its role, conditional on its resourceVersion.
import type { SetReplicaSetPodMetadataAction } from '../../rollout/index.ts';
import { EPHEMERAL_METADATA_ANNOTATION } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { KubeConflictError, kubeCall, type KubeRequestContext } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import type { ActionHandler } from './action-handler.ts';

/**
 * Merge-patches spec.template.metadata (null removes a key) and the ephemeral-metadata annotation in one
 * write carrying the resourceVersion the plan was made from; a ReplicaSet changed since the read is a
 * conflict before anything is sent. The pods it already runs are patched by their own actions.
 */
export const setReplicaSetPodMetadata: ActionHandler<SetReplicaSetPodMetadataAction> = async (
  action,
  { clients, read, namespace },
) => {
  const target = action.name;
  const request: KubeRequestContext = { verb: 'patch', kind: 'ReplicaSet', namespace, name: action.name };
  const live = read.observed.replicaSets.find((rs) => rs.name === action.name);
  if (live === undefined || live.resourceVersion !== action.resourceVersion)
    throw new KubeConflictError(
      `${action.name} changed since the plan was made`,
      request,
      undefined,
      'Stale',
    );
  const metadata: Record<string, unknown> = {};
  if (Object.keys(action.template.labels).length > 0) metadata.labels = action.template.labels;
  if (Object.keys(action.template.annotations).length > 0) metadata.annotations = action.template.annotations;
  const patched = await kubeCall(request, () =>
    clients.apps.patchNamespacedReplicaSet(
      {
        namespace,
        name: action.name,
        fieldManager: FIELD_MANAGER,
        body: {
          metadata: {
            resourceVersion: action.resourceVersion,
            annotations: { [EPHEMERAL_METADATA_ANNOTATION]: action.recorded },
          },
          spec: { template: { metadata } },
        },
      },
      MERGE_PATCH,
    ),
  );
  const written = writtenVersionOf('ReplicaSet', namespace, action.name, patched);
  return { target, result: 'updated', ...(written && { written }) };
};
