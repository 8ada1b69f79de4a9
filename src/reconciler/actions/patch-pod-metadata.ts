// patchPodMetadata: a running pod's labels and annotations changed in place (ephemeral metadata), never restarted.
import type { PatchPodMetadataAction } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { isNotFound, kubeCall, type KubeRequestContext } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import type { ActionHandler } from './action-handler.ts';

/**
 * Merge-patches the keys the action names (null removes one) and nothing else, so labels another
 * controller set stay. A pod whose read metadata already has them is `unchanged` without a request; a pod
 * gone meanwhile is `unchanged` too (its replacement takes the metadata from the ReplicaSet's template).
 */
export const patchPodMetadata: ActionHandler<PatchPodMetadataAction> = async (
  action,
  { clients, read, namespace },
) => {
  const target = action.name;
  const request: KubeRequestContext = { verb: 'patch', kind: 'Pod', namespace, name: action.name };
  const live = read.observed.pods.find((pod) => pod.name === action.name);
  if (live === undefined) return { target, result: 'unchanged' };
  const holds = (have: Record<string, string> | undefined, want: Record<string, string | null>): boolean =>
    Object.entries(want).every(([key, value]) =>
      value === null ? have?.[key] === undefined : have?.[key] === value,
    );
  if (holds(live.labels, action.change.labels) && holds(live.annotations, action.change.annotations))
    return { target, result: 'unchanged' };
  const metadata: Record<string, unknown> = {};
  if (Object.keys(action.change.labels).length > 0) metadata.labels = action.change.labels;
  if (Object.keys(action.change.annotations).length > 0) metadata.annotations = action.change.annotations;
  let patched: unknown;
  try {
    patched = await kubeCall(request, () =>
      clients.core.patchNamespacedPod(
        { namespace, name: action.name, fieldManager: FIELD_MANAGER, body: { metadata } },
        MERGE_PATCH,
      ),
    );
  } catch (err) {
    if (isNotFound(err)) return { target, result: 'unchanged' };
    throw err;
  }
  // The next pass plans from a cache that holds this write, so it does not send the patch again.
  const written = writtenVersionOf('Pod', namespace, action.name, patched);
  return { target, result: 'updated', ...(written && { written }) };
};
