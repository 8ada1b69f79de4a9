// Lists Rollouts where Rollgate looks for them: every namespace, or the one `kubernetes.watchNamespace` names.
import { toPlainObject, type KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';

/**
 * Every Rollout (matching `labelSelector`) in `namespace`, or in all namespaces when it is empty. A
 * namespaced install is granted Roles only, so it must never ask across namespaces: that list would be
 * refused (403) however few Rollouts it would return.
 */
export async function listRollouts<T>(
  clients: KubeClients,
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
