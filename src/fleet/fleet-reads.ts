// Reading Fleets from the local cluster: the list the holds and the controller share.
import type { KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { FLEET_PLURAL, type FleetSpec } from '../manifest/fleet.ts';
import type { FleetStatus } from './fleet-status.ts';

/** A Fleet as read: its spec unchecked (the planner checks it), its status as the controller wrote it. */
export interface FleetRead {
  namespace: string;
  name: string;
  generation?: number;
  resourceVersion?: string;
  annotations: Record<string, string>;
  spec: FleetSpec;
  status?: FleetStatus;
}

type Raw = Record<string, unknown>;
const record = (value: unknown): Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Raw) : {};

/** One Fleet object → what Rollgate reads of it (a parsing boundary: fields are checked by the planner). */
export function fleetReadOf(object: unknown): FleetRead {
  const metadata = record(record(object).metadata);
  const status = record(object).status;
  return {
    namespace: String(metadata.namespace ?? ''),
    name: String(metadata.name ?? ''),
    ...(typeof metadata.generation === 'number' ? { generation: metadata.generation } : {}),
    ...(typeof metadata.resourceVersion === 'string' ? { resourceVersion: metadata.resourceVersion } : {}),
    annotations: record(metadata.annotations) as Record<string, string>,
    spec: record(record(object).spec) as unknown as FleetSpec,
    ...(status !== undefined && Array.isArray(record(status).clusters)
      ? { status: status as FleetStatus }
      : {}),
  };
}

/** Every Fleet of the local cluster; none when the Fleet CRD is not installed. */
export async function listFleets(clients: KubeClients, namespace?: string): Promise<FleetRead[]> {
  try {
    const list = (await kubeCall({ verb: 'list', kind: 'Fleet', ...(namespace ? { namespace } : {}) }, () =>
      namespace
        ? clients.custom.listNamespacedCustomObject({
            group: ROLLGATE_API_GROUP,
            version: 'v1alpha1',
            namespace,
            plural: FLEET_PLURAL,
          })
        : clients.custom.listClusterCustomObject({
            group: ROLLGATE_API_GROUP,
            version: 'v1alpha1',
            plural: FLEET_PLURAL,
          }),
    )) as { items?: unknown[] };
    return (list.items ?? []).map(fleetReadOf);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** The Fleet whose `spec.rollout` names this Rollout (by repository path, and by name when it gives one). */
export function fleetOfRollout(
  fleets: readonly FleetRead[],
  rollout: { file: string; name: string },
): FleetRead | undefined {
  return fleets.find(
    (fleet) =>
      fleet.spec.rollout?.path === rollout.file &&
      (fleet.spec.rollout.name === undefined || fleet.spec.rollout.name === rollout.name),
  );
}
