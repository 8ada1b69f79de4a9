// The reads of a rollout's world (ObjectReadClients) sent by plain-kube-http.ts when the kubeconfig's current
// context is simple, as the reconciler's writes are (plain-write-clients.ts): a pass that reads the API (no
// informer cache yet, or the pass after a 409) otherwise pays client-node's fetch stack and its model
// classes for each list, then a JSON round trip back to plain objects.
import type {
  AppsV1Api,
  AppsV1ApiListNamespacedReplicaSetRequest,
  AppsV1ApiReadNamespacedDeploymentRequest,
  AppsV1ApiReadNamespacedReplicaSetRequest,
  Configuration,
  CoreV1Api,
  CoreV1ApiListNamespacedPodRequest,
  CoreV1ApiReadNamespacedPodTemplateRequest,
  CoreV1ApiReadNamespacedServiceRequest,
  CustomObjectsApi,
  CustomObjectsApiGetNamespacedCustomObjectRequest,
  CustomObjectsApiListNamespacedCustomObjectRequest,
} from '@kubernetes/client-node';
import { plainBuiltinReads } from './builtin-object-client.ts';
import type { ObjectReadClients } from './object-read-clients.ts';
import type { PlainKubeHttp } from './plain-kube-http.ts';

const part = (value: string): string => encodeURIComponent(value);

/**
 * True when `param` sets no field but `fields` (each a string): any other field (paging, a
 * resourceVersion, a field selector…) or an options argument is client-node's to send.
 */
function only(param: object, options: unknown, fields: readonly string[]): boolean {
  if (options !== undefined) return false;
  return Object.entries(param).every(
    ([field, value]) => value === undefined || (fields.includes(field) && typeof value === 'string'),
  );
}

const NAMED = ['namespace', 'name'] as const;
const LISTED = ['namespace', 'labelSelector'] as const;
const CUSTOM_NAMED = ['group', 'version', 'namespace', 'plural', 'name'] as const;
const CUSTOM_LISTED = ['group', 'version', 'namespace', 'plural', 'labelSelector'] as const;

/**
 * `clients`' reads of a rollout's world, each sent by `http` whenever the current context is simple and
 * the call names no more than an object (or a namespace and a label selector); otherwise, and for every
 * other kubeconfig, `clients` send it. Answers are the API server's JSON with the metadata timestamps
 * client-node's models would print (builtin-object-client.ts), so a reader's plain copy is the same
 * either way; failures are those client-node throws (KubeHttpStatusError), which kubeCall types alike.
 */
export function plainObjectReads(clients: ObjectReadClients, http: PlainKubeHttp): ObjectReadClients {
  /** The plain reads on the current route, or undefined when client-node must send. */
  const plain = () => {
    const route = http.route();
    if (route === undefined) return undefined;
    return {
      ...plainBuiltinReads((path) => http.send(route, { method: 'GET', path })),
      get: (path: string) => http.send(route, { method: 'GET', path }),
    };
  };
  const core: ObjectReadClients['core'] = {
    listNamespacedPod(param: CoreV1ApiListNamespacedPodRequest, options?: Configuration) {
      const reads = only(param, options, LISTED) ? plain() : undefined;
      return reads ? reads.core.listNamespacedPod(param) : clients.core.listNamespacedPod(param, options);
    },
    readNamespacedService(param: CoreV1ApiReadNamespacedServiceRequest, options?: Configuration) {
      const reads = only(param, options, NAMED) ? plain() : undefined;
      return reads
        ? reads.core.readNamespacedService(param)
        : clients.core.readNamespacedService(param, options);
    },
    readNamespacedPodTemplate(param: CoreV1ApiReadNamespacedPodTemplateRequest, options?: Configuration) {
      const reads = only(param, options, NAMED) ? plain() : undefined;
      return reads
        ? reads.core.readNamespacedPodTemplate(param)
        : clients.core.readNamespacedPodTemplate(param, options);
    },
  } as Pick<CoreV1Api, 'listNamespacedPod' | 'readNamespacedService' | 'readNamespacedPodTemplate'>;
  const apps: ObjectReadClients['apps'] = {
    listNamespacedReplicaSet(param: AppsV1ApiListNamespacedReplicaSetRequest, options?: Configuration) {
      const reads = only(param, options, LISTED) ? plain() : undefined;
      return reads
        ? reads.apps.listNamespacedReplicaSet(param)
        : clients.apps.listNamespacedReplicaSet(param, options);
    },
    readNamespacedReplicaSet(param: AppsV1ApiReadNamespacedReplicaSetRequest, options?: Configuration) {
      const reads = only(param, options, NAMED) ? plain() : undefined;
      return reads
        ? reads.apps.readNamespacedReplicaSet(param)
        : clients.apps.readNamespacedReplicaSet(param, options);
    },
    readNamespacedDeployment(param: AppsV1ApiReadNamespacedDeploymentRequest, options?: Configuration) {
      const reads = only(param, options, NAMED) ? plain() : undefined;
      return reads
        ? reads.apps.readNamespacedDeployment(param)
        : clients.apps.readNamespacedDeployment(param, options);
    },
  } as Pick<AppsV1Api, 'listNamespacedReplicaSet' | 'readNamespacedReplicaSet' | 'readNamespacedDeployment'>;
  // Named apart: these calls forward a caller's own request, whose kind the RBAC check of the install
  // (test/integration/install/api-requests-in-code.ts) reads at the caller's call.
  const customObjects = clients.custom;
  const custom: ObjectReadClients['custom'] = {
    getNamespacedCustomObject(
      param: CustomObjectsApiGetNamespacedCustomObjectRequest,
      options?: Configuration,
    ) {
      const reads = only(param, options, CUSTOM_NAMED) ? plain() : undefined;
      return reads
        ? reads.get(
            `/apis/${part(param.group)}/${part(param.version)}/namespaces/${part(param.namespace)}/${part(param.plural)}/${part(param.name)}`,
          )
        : customObjects.getNamespacedCustomObject(param, options);
    },
    listNamespacedCustomObject(
      param: CustomObjectsApiListNamespacedCustomObjectRequest,
      options?: Configuration,
    ) {
      const reads = only(param, options, CUSTOM_LISTED) ? plain() : undefined;
      const query = param.labelSelector === undefined ? '' : `?labelSelector=${part(param.labelSelector)}`;
      return reads
        ? reads.get(
            `/apis/${part(param.group)}/${part(param.version)}/namespaces/${part(param.namespace)}/${part(param.plural)}${query}`,
          )
        : customObjects.listNamespacedCustomObject(param, options);
    },
  } as Pick<CustomObjectsApi, 'getNamespacedCustomObject' | 'listNamespacedCustomObject'>;
  return { core, apps, custom };
}
