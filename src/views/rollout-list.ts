// Lists Rollouts where Rollgate looks for them: every namespace, or the one `kubernetes.watchNamespace` names.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { toPlainObject } from '../kube/plain-object.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { ARGO_API, ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';

/**
 * What listing Rollouts uses of a connection: client-node's clients (KubeClients) or the CLI's
 * CustomObjectClient, which needs no client-node (custom-object-client.ts).
 */
export interface RolloutListClients {
  custom: Pick<CustomObjectsApi, 'listNamespacedCustomObject' | 'listClusterCustomObject'>;
}

/** Both groups a Rollout may live in: what the CLI's reads and `rollgate dashboard` look at. */
export const BOTH_APIS: readonly DrivenApi[] = [ROLLGATE_API, ARGO_API];

/**
 * Every Rollout (matching `labelSelector`) in `namespace`, or in all namespaces when it is empty. A
 * namespaced install is granted Roles only, so it must never ask across namespaces: that list would be
 * refused (403) however few Rollouts it would return.
 */
export async function listRollouts<T>(
  clients: RolloutListClients,
  namespace: string,
  labelSelector?: string,
  api: DrivenApi = ROLLGATE_API,
): Promise<T[]> {
  const selector = labelSelector === undefined ? {} : { labelSelector };
  const list = await kubeCall({ verb: 'list', kind: 'Rollout', ...(namespace ? { namespace } : {}) }, () =>
    namespace
      ? clients.custom.listNamespacedCustomObject({
          group: api.group,
          version: api.version,
          namespace,
          plural: api.plurals.rollouts,
          ...selector,
        })
      : clients.custom.listClusterCustomObject({
          group: api.group,
          version: api.version,
          plural: api.plurals.rollouts,
          ...selector,
        }),
  );
  return toPlainObject<{ items?: T[] }>(list).items ?? [];
}

/**
 * The Rollouts of every API in `apis`, in their order. A group whose CRD is not installed (404: a cluster
 * that never had Argo Rollouts) holds none; any other failure is thrown, so a list is never silently short.
 */
export async function listRolloutsIn<T>(
  clients: RolloutListClients,
  namespace: string,
  apis: readonly DrivenApi[],
  labelSelector?: string,
): Promise<T[]> {
  const lists = await Promise.all(
    apis.map((api) =>
      listRollouts<T>(clients, namespace, labelSelector, api).catch((err: unknown) => {
        if (isNotFound(err)) return [];
        throw err;
      }),
    ),
  );
  return lists.flat();
}
