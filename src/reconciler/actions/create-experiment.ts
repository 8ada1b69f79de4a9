// createExperiment: an experiment step's Experiment, owned by the rollout; skipped when it exists.
import type { CreateExperimentAction } from '../../rollout/index.ts';
import { FIELD_MANAGER } from '../../kube/client.ts';
import { dispositionOf, kubeCall } from '../../kube/errors.ts';
import type { ActionHandler } from './action-handler.ts';

/** Creates the Experiment in the rollout's group, owned by the rollout; one that exists already is `unchanged`. */
export const createExperiment: ActionHandler<CreateExperimentAction> = async (
  action,
  { clients, api, read, namespace },
) => {
  const target = action.name;
  if ((read.observed.experiments ?? []).some((experiment) => experiment.name === action.name))
    return { target, result: 'unchanged' };
  const rollout = read.observed.rollout;
  const body = {
    apiVersion: api.apiVersion,
    kind: 'Experiment',
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
    spec: action.spec,
  };
  try {
    await kubeCall({ verb: 'create', kind: 'Experiment', namespace, name: action.name }, () =>
      clients.custom.createNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.experiments,
        body,
        fieldManager: FIELD_MANAGER,
      }),
    );
  } catch (err) {
    // AlreadyExists (a cache that had not seen it yet): the next pass observes it.
    if (dispositionOf(err) === 'conflict') return { target, result: 'unchanged' };
    throw err;
  }
  return { target, result: 'created' };
};
