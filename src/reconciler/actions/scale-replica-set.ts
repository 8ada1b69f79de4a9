// scaleReplicaSet: replicas and annotations of an existing ReplicaSet in one write, conditional on its resourceVersion.
import type { ScaleReplicaSetAction } from '../../rollout/index.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION, parseDeadline } from '../../rollout/index.ts';
import { FIELD_MANAGER, MERGE_PATCH } from '../../kube/client.ts';
import { KubeConflictError, kubeCall, type KubeRequestContext } from '../../kube/errors.ts';
import { writtenVersionOf } from '../read-policy.ts';
import { UnsafeActionError } from '../unsafe-action-error.ts';
import type { ActionHandler } from './action-handler.ts';

/**
 * The annotation values a ReplicaSet write may carry; the scale-down deadline must be a timestamp the
 * planner itself would read back (its parseDeadline), so what is written is never treated as missing.
 */
export function validateAnnotations(
  annotations: Record<string, string | null> | undefined,
): string | undefined {
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (value === null) continue;
    if (key === SCALE_DOWN_DEADLINE_ANNOTATION && parseDeadline(value) === undefined)
      return `annotation ${key} must be an RFC 3339 timestamp, got ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** True when the live ReplicaSet already has the replicas and annotations the action asks for. */
export function isScaleNoop(
  live: { replicas: number; annotations: Record<string, string> },
  action: { replicas: number; annotations?: Record<string, string | null> | undefined },
): boolean {
  if (live.replicas !== action.replicas) return false;
  for (const [key, value] of Object.entries(action.annotations ?? {})) {
    if (value === null ? key in live.annotations : live.annotations[key] !== value) return false;
  }
  return true;
}

/**
 * Merge-patches spec.replicas and the annotations, carrying the resourceVersion the plan was made from.
 * A ReplicaSet that changed since the read is a conflict before anything is sent; an invalid
 * annotation value is refused ({@link UnsafeActionError}).
 */
export const scaleReplicaSet: ActionHandler<ScaleReplicaSetAction> = async (
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
  if (isScaleNoop(live, action)) return { target, result: 'unchanged' };
  const invalid = validateAnnotations(action.annotations);
  if (invalid !== undefined) throw new UnsafeActionError(action, invalid);
  const metadata: Record<string, unknown> = { resourceVersion: action.resourceVersion };
  if (action.annotations !== undefined && Object.keys(action.annotations).length > 0)
    metadata.annotations = action.annotations;
  const patched = await kubeCall(request, () =>
    clients.apps.patchNamespacedReplicaSet(
      {
        namespace,
        name: action.name,
        fieldManager: FIELD_MANAGER,
        body: { metadata, spec: { replicas: action.replicas } },
      },
      MERGE_PATCH,
    ),
  );
  const written = writtenVersionOf('ReplicaSet', namespace, action.name, patched);
  return { target, result: 'updated', ...(written && { written }) };
};
