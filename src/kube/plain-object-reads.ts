// The reads of a rollout's world (ObjectReadClients) sent by plain-kube-http.ts when the kubeconfig's current
// context is simple, as the reconciler's writes are (plain-write-clients.ts): a pass that reads the API (no
// informer cache yet, or the pass after a 409) otherwise pays client-node's fetch stack and its model
// classes for each list, then a JSON round trip back to plain objects.
import type {
  AppsV1ApiListNamespacedReplicaSetRequest,
  AppsV1ApiReadNamespacedDeploymentRequest,
  AppsV1ApiReadNamespacedReplicaSetRequest,
  Configuration,
  CoreV1ApiListNamespacedPodRequest,
  CoreV1ApiReadNamespacedPodTemplateRequest,
  CoreV1ApiReadNamespacedServiceRequest,
  CustomObjectsApiGetNamespacedCustomObjectRequest,
  CustomObjectsApiListNamespacedCustomObjectRequest,
} from '@kubernetes/client-node';
import { plainBuiltinReads } from './builtin-object-client.ts';
import { customObjectListPath, customObjectPath } from './custom-object-paths.ts';
import type { ObjectReadClients } from './object-read-clients.ts';
import type { PlainKubeHttp } from './plain-kube-http.ts';

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

/** The built-in reads on a plain route, and a GET of any path on it (the custom objects'). */
type PlainReads = ReturnType<typeof plainBuiltinReads> & { get: (path: string) => Promise<unknown> };

/**
 * `clients`' reads of a rollout's world, each sent by `http` whenever the current context is simple and
 * the call names no more than an object (or a namespace and a label selector); otherwise, and for every
 * other kubeconfig, `clients` send it. Answers are the API server's JSON with the metadata timestamps
 * client-node's models would print (builtin-object-client.ts), so a reader's plain copy is the same
 * either way; failures are those client-node throws (KubeHttpStatusError), which kubeCall types alike.
 */
export function plainObjectReads(clients: ObjectReadClients, http: PlainKubeHttp): ObjectReadClients {
  /** The plain reads on the current route, or undefined when client-node must send. */
  const plain = (): PlainReads | undefined => {
    const route = http.route();
    if (route === undefined) return undefined;
    const get = (path: string): Promise<unknown> => http.send(route, { method: 'GET', path });
    return { ...plainBuiltinReads(get), get };
  };
  /** One read: `viaPlain` when `param` names no more than `fields` and the route is plain, else `viaClient`. */
  const either =
    <P extends object, R>(
      fields: readonly string[],
      viaPlain: (reads: PlainReads, param: P) => Promise<R>,
      viaClient: (param: P, options?: Configuration) => Promise<R>,
    ) =>
    (param: P, options?: Configuration): Promise<R> => {
      const reads = only(param, options, fields) ? plain() : undefined;
      return reads ? viaPlain(reads, param) : viaClient(param, options);
    };
  const { core: coreReads, apps: appsReads } = clients;
  // Named apart: these calls forward a caller's own request, whose kind the RBAC check of the install
  // (test/integration/install/api-requests-in-code.ts) reads at the caller's call.
  const customObjects = clients.custom;
  return {
    core: {
      listNamespacedPod: either(
        LISTED,
        (reads, param: CoreV1ApiListNamespacedPodRequest) => reads.core.listNamespacedPod(param),
        (param, options) => coreReads.listNamespacedPod(param, options),
      ),
      readNamespacedService: either(
        NAMED,
        (reads, param: CoreV1ApiReadNamespacedServiceRequest) => reads.core.readNamespacedService(param),
        (param, options) => coreReads.readNamespacedService(param, options),
      ),
      readNamespacedPodTemplate: either(
        NAMED,
        (reads, param: CoreV1ApiReadNamespacedPodTemplateRequest) =>
          reads.core.readNamespacedPodTemplate(param),
        (param, options) => coreReads.readNamespacedPodTemplate(param, options),
      ),
    } as ObjectReadClients['core'],
    apps: {
      listNamespacedReplicaSet: either(
        LISTED,
        (reads, param: AppsV1ApiListNamespacedReplicaSetRequest) =>
          reads.apps.listNamespacedReplicaSet(param),
        (param, options) => appsReads.listNamespacedReplicaSet(param, options),
      ),
      readNamespacedReplicaSet: either(
        NAMED,
        (reads, param: AppsV1ApiReadNamespacedReplicaSetRequest) =>
          reads.apps.readNamespacedReplicaSet(param),
        (param, options) => appsReads.readNamespacedReplicaSet(param, options),
      ),
      readNamespacedDeployment: either(
        NAMED,
        (reads, param: AppsV1ApiReadNamespacedDeploymentRequest) =>
          reads.apps.readNamespacedDeployment(param),
        (param, options) => appsReads.readNamespacedDeployment(param, options),
      ),
    } as ObjectReadClients['apps'],
    custom: {
      getNamespacedCustomObject: either(
        CUSTOM_NAMED,
        (reads, param: CustomObjectsApiGetNamespacedCustomObjectRequest) =>
          reads.get(customObjectPath(param)),
        (param, options) => customObjects.getNamespacedCustomObject(param, options),
      ),
      listNamespacedCustomObject: either(
        CUSTOM_LISTED,
        (reads, param: CustomObjectsApiListNamespacedCustomObjectRequest) =>
          reads.get(customObjectListPath(param)),
        (param, options) => customObjects.listNamespacedCustomObject(param, options),
      ),
    } as ObjectReadClients['custom'],
  };
}
