// createReplicaSet: the ReplicaSet of a new revision, owned by its rollout; skipped when it exists.
import type { V1PodTemplateSpec, V1ReplicaSet } from '@kubernetes/client-node';
import type { CreateReplicaSetAction } from '../../rollout/index.ts';
import { FIELD_MANAGER } from '../../kube/client.ts';
import { kubeCall } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import type { ActionHandler } from './action-handler.ts';

/** Creates the ReplicaSet (ownerReference controller: the rollout); a create fails if it exists meanwhile. */
export const createReplicaSet: ActionHandler<CreateReplicaSetAction> = async (
  action,
  { clients, api, read, namespace },
) => {
  const target = action.name;
  if (read.observed.replicaSets.some((rs) => rs.name === action.name)) return { target, result: 'unchanged' };
  const rollout = read.observed.rollout;
  const body: V1ReplicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: action.name,
      namespace,
      labels: action.labels,
      annotations: action.annotations,
      ownerReferences: [
        {
          apiVersion: api.apiVersion,
          kind: 'Rollout',
          name: rollout.metadata.name,
          uid: rollout.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas: action.replicas,
      minReadySeconds: action.minReadySeconds,
      selector: action.selector,
      template: action.template as V1PodTemplateSpec,
    },
  };
  const created = await kubeCall({ verb: 'create', kind: 'ReplicaSet', namespace, name: action.name }, () =>
    clients.apps.createNamespacedReplicaSet({ namespace, body, fieldManager: FIELD_MANAGER }),
  );
  const written = writtenVersionOf('ReplicaSet', namespace, action.name, created);
  return { target, result: 'created', ...(written && { written }) };
};
