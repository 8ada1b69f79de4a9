// patchServiceSelector: points a Service's pod-template-hash selector at a revision, conditional on its resourceVersion.
import type { PatchServiceSelectorAction } from '../../rollout/index.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { KubeConflictError, kubeCall, type KubeRequestContext } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import type { ActionHandler } from './action-handler.ts';

/** Merge-patches the selector's hash key (other keys kept); a Service not observed is a conflict. */
export const patchServiceSelector: ActionHandler<PatchServiceSelectorAction> = async (
  action,
  { clients, read, namespace },
) => {
  const target = action.service;
  const request: KubeRequestContext = { verb: 'patch', kind: 'Service', namespace, name: action.service };
  const live = read.observed.services.find((service) => service.name === action.service);
  if (live === undefined)
    throw new KubeConflictError(`${action.service} not observed`, request, undefined, 'Stale');
  if (live.selector[POD_TEMPLATE_HASH_LABEL] === action.podTemplateHash)
    return { target, result: 'unchanged' };
  const patched = await kubeCall(request, () =>
    clients.core.patchNamespacedService(
      {
        namespace,
        name: action.service,
        fieldManager: FIELD_MANAGER,
        body: {
          metadata: { resourceVersion: action.resourceVersion },
          spec: { selector: { [POD_TEMPLATE_HASH_LABEL]: action.podTemplateHash } },
        },
      },
      MERGE_PATCH,
    ),
  );
  const written = writtenVersionOf('Service', namespace, action.service, patched);
  return { target, result: 'updated', ...(written && { written }) };
};
