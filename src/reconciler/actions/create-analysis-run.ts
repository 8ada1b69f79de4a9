// createAnalysisRun: an AnalysisRun built from its templates, owned by the rollout; skipped when it exists.
import type { CreateAnalysisRunAction } from '../../rollout/index.ts';
import { buildAnalysisRunFromTemplates } from '../analysis-run-factory.ts';
import { FIELD_MANAGER } from '../../kube/client.ts';
import { kubeCall } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import type { ActionHandler } from './action-handler.ts';

/** Builds the run (the factory reads the templates) and creates it; a create fails if it exists meanwhile. */
export const createAnalysisRun: ActionHandler<CreateAnalysisRunAction> = async (
  action,
  { clients, api, read, namespace, analysisRuns },
) => {
  const target = action.name;
  if (read.observed.analysisRuns.some((run) => run.name === action.name))
    return { target, result: 'unchanged' };
  const rollout = read.observed.rollout;
  const factory = analysisRuns ?? buildAnalysisRunFromTemplates;
  const body = await factory(clients, action, {
    apiVersion: api.apiVersion,
    kind: 'Rollout',
    name: rollout.metadata.name,
    namespace,
    uid: rollout.metadata.uid ?? '',
    object: read.raw,
    stableHash: rollout.status?.stableRS,
    latestHash: rollout.status?.currentPodHash,
  });
  // The run lives in its rollout's group, whatever the factory stamped (the API server refuses a body
  // whose apiVersion is not the collection's).
  const created = await kubeCall({ verb: 'create', kind: 'AnalysisRun', namespace, name: action.name }, () =>
    clients.custom.createNamespacedCustomObject({
      group: api.group,
      version: api.version,
      namespace,
      plural: api.plurals.analysisRuns,
      body: { ...body, apiVersion: api.apiVersion },
      fieldManager: FIELD_MANAGER,
    }),
  );
  const written = writtenVersionOf('AnalysisRun', namespace, action.name, created);
  return { target, result: 'created', ...(written && { written }) };
};
