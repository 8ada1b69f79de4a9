// deleteAnalysisRun: removes an AnalysisRun (history beyond its limit, or a background run a promote replaces).
import type { DeleteAnalysisRunAction } from '../../rollout/index.ts';
import { isNotFound, kubeCall } from '../../kube/errors.ts';
import type { ActionHandler } from './action-handler.ts';

/** Deletes the run; one already gone is `unchanged`. */
export const deleteAnalysisRun: ActionHandler<DeleteAnalysisRunAction> = async (
  action,
  { clients, api, namespace },
) => {
  const target = action.name;
  try {
    await kubeCall({ verb: 'delete', kind: 'AnalysisRun', namespace, name: action.name }, () =>
      clients.custom.deleteNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.analysisRuns,
        name: action.name,
      }),
    );
    return {
      target,
      result: 'deleted',
      written: { kind: 'AnalysisRun', namespace, name: action.name, deleted: true },
    };
  } catch (err) {
    if (isNotFound(err)) return { target, result: 'unchanged' };
    throw err;
  }
};
