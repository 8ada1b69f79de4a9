// A Deployment whose pods a Rollout took over (workloadRef scaleDown) keeps the replicas Rollgate gave it when Git is applied.
import type { ObjectApplier } from './object-applier.ts';

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/** True when a Rollout's workloadRef names the Deployment and hands its pods over (onsuccess, progressively). */
function handsOver(rollout: Json, deployment: string): boolean {
  const ref = record(record(rollout.spec).workloadRef);
  return (
    ref.kind === 'Deployment' &&
    ref.name === deployment &&
    (ref.scaleDown === 'onsuccess' || ref.scaleDown === 'progressively')
  );
}

/**
 * The prepared Deployment with `spec.replicas` as it is live, when a Rollout in its namespace has taken
 * its pods over. Git's count would otherwise come back on every apply of a new template (pods of that
 * template running outside the canary until the rollout takes them away again) and on every selfHeal
 * (a scale up and down at each drift check). A Deployment not yet in the cluster, or one no Rollout
 * hands over, is applied as Git says.
 */
export async function withHandedOverReplicas(
  prepared: Json,
  applier: Pick<ObjectApplier, 'read' | 'rolloutsIn'>,
): Promise<Json> {
  if (prepared.kind !== 'Deployment' || prepared.apiVersion !== 'apps/v1') return prepared;
  const metadata = record(prepared.metadata);
  if (typeof metadata.name !== 'string' || typeof metadata.namespace !== 'string') return prepared;
  const { name, namespace } = metadata;
  const rollouts = await applier.rolloutsIn(namespace);
  if (!rollouts.some((rollout) => handsOver(rollout, name))) return prepared;
  const live = await applier.read({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });
  const replicas = record(live?.spec).replicas;
  if (typeof replicas !== 'number') return prepared;
  return { ...prepared, spec: { ...record(prepared.spec), replicas } };
}
