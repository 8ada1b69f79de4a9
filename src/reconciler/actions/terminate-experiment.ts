// terminateExperiment: sets spec.terminate on an unfinished Experiment of the rollout.
import type { TerminateExperimentAction } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { isNotFound, kubeCall } from '../../kube/errors.ts';
import type { ActionHandler } from './action-handler.ts';

/** Merge-patches spec.terminate; an Experiment not observed, already told, or gone is `unchanged`. */
export const terminateExperiment: ActionHandler<TerminateExperimentAction> = async (
  action,
  { clients, api, read, namespace },
) => {
  const target = action.name;
  const live = (read.observed.experiments ?? []).find((experiment) => experiment.name === action.name);
  if (live === undefined || live.terminate) return { target, result: 'unchanged' };
  try {
    await kubeCall({ verb: 'patch', kind: 'Experiment', namespace, name: action.name }, () =>
      clients.custom.patchNamespacedCustomObject(
        {
          group: api.group,
          version: api.version,
          namespace,
          plural: api.plurals.experiments,
          name: action.name,
          body: { spec: { terminate: true } },
          fieldManager: FIELD_MANAGER,
        },
        MERGE_PATCH,
      ),
    );
  } catch (err) {
    if (isNotFound(err)) return { target, result: 'unchanged' };
    throw err;
  }
  return { target, result: 'updated' };
};
