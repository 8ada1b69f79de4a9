// What GET /api/v1/fleets reads: the Fleet objects of the local cluster (rollgate.dev/v1alpha1 `fleets`), as views.
import type { KubeClients } from '../../kube/client.ts';
import { isNotFound, kubeCall } from '../../kube/errors.ts';
import { buildFleetView, type FleetView } from '../../views/fleet-view.ts';

/** Where Fleets are served: Rollgate's own group, in the cluster Rollgate runs in. */
export const FLEET_API = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'fleets' } as const;

/** The Fleets, or `installed: false` when the API server has no Fleet resource (the CRD is not installed). */
export interface FleetsResponse {
  installed: boolean;
  items: FleetView[];
}

/**
 * Every Fleet of the cluster, or of `namespace` when set, read as unstructured objects and each checked
 * where it is read (buildFleetView): one malformed Fleet is shown with its problem, the others as they are.
 * Sorted by namespace and name.
 */
export async function readFleets(clients: KubeClients, namespace = ''): Promise<FleetsResponse> {
  let list: { items?: unknown };
  try {
    list = (await kubeCall({ verb: 'list', kind: 'Fleet', ...(namespace ? { namespace } : {}) }, () =>
      namespace === ''
        ? clients.custom.listClusterCustomObject({
            group: 'rollgate.dev',
            version: 'v1alpha1',
            plural: 'fleets',
          })
        : clients.custom.listNamespacedCustomObject({
            group: 'rollgate.dev',
            version: 'v1alpha1',
            plural: 'fleets',
            namespace,
          }),
    )) as { items?: unknown };
  } catch (err) {
    // The resource itself is unknown to the API server: no CRD, so no Fleet, and the view says so.
    if (isNotFound(err)) return { installed: false, items: [] };
    throw err;
  }
  const items = (Array.isArray(list.items) ? (list.items as unknown[]) : []).map(buildFleetView);
  items.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { installed: true, items };
}
