// The Rollout's own annotations a plan asks for (its revision number), written before its status.
import type { DrivenApi } from '../../manifest/driven-api.ts';
import { FIELD_MANAGER, MERGE_PATCH, type KubeClients } from '../../kube/client.ts';
import { kubeCall } from '../../kube/errors.ts';
import type { ObservedRead } from '../observed-state-reader.ts';
import { writtenVersionOf, type WrittenVersion } from '../read-policy.ts';
import type { WriteResult } from './action-handler.ts';

/** What annotating the Rollout did, and the metadata it left (for the status write after it). */
export interface AnnotatedRollout {
  result: WriteResult;
  metadata?: Record<string, unknown>;
  written?: WrittenVersion;
}

/**
 * Merge-patches metadata.annotations of the Rollout, carrying the resourceVersion it was read at (a change
 * since is a 409: the pass re-plans). Sends nothing when every annotation is already there. Returns the
 * metadata the write left, so the status written after it in the same pass carries that version instead
 * of failing on the one this write replaced.
 */
export async function annotateRollout(
  annotations: Record<string, string>,
  { clients, api, read }: { clients: KubeClients; api: DrivenApi; read: ObservedRead },
): Promise<AnnotatedRollout> {
  const rollout = read.observed.rollout;
  const name = rollout.metadata.name;
  const namespace = rollout.metadata.namespace ?? 'default';
  const live = rollout.metadata.annotations ?? {};
  if (Object.entries(annotations).every(([key, value]) => live[key] === value))
    return { result: 'unchanged' };
  const patched = await kubeCall({ verb: 'patch', kind: 'Rollout', namespace, name }, () =>
    clients.custom.patchNamespacedCustomObject(
      {
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.rollouts,
        name,
        body: { metadata: { resourceVersion: rollout.metadata.resourceVersion, annotations } },
        fieldManager: FIELD_MANAGER,
      },
      MERGE_PATCH,
    ),
  );
  const metadata = (patched as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  const written = writtenVersionOf('Rollout', namespace, name, patched);
  return { result: 'updated', ...(metadata !== undefined && { metadata }), ...(written && { written }) };
}
