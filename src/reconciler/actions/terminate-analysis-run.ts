// terminateAnalysisRun: sets spec.terminate on a running AnalysisRun.
import type { TerminateAnalysisRunAction } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { kubeCall } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import type { ActionHandler } from './action-handler.ts';

/** Merge-patches spec.terminate; a run not observed or already finished is `unchanged`. */
export const terminateAnalysisRun: ActionHandler<TerminateAnalysisRunAction> = async (
  action,
  { clients, api, read, namespace },
) => {
  const target = action.name;
  const live = read.observed.analysisRuns.find((run) => run.name === action.name);
  if (live === undefined || live.terminated) return { target, result: 'unchanged' };
  const patched = await kubeCall({ verb: 'patch', kind: 'AnalysisRun', namespace, name: action.name }, () =>
    clients.custom.patchNamespacedCustomObject(
      {
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.analysisRuns,
        name: action.name,
        body: { spec: { terminate: true } },
        fieldManager: FIELD_MANAGER,
      },
      MERGE_PATCH,
    ),
  );
  const written = writtenVersionOf('AnalysisRun', namespace, action.name, patched);
  return { target, result: 'updated', ...(written && { written }) };
};
