// The reads of built-in kinds a rollout's view makes (its ReplicaSets, pods and Services, a workloadRef's
// Deployment, ReplicaSet or PodTemplate) without client-node, for a simple kubeconfig: the same paths
// as client-node's CoreV1Api and AppsV1Api, on the CLI's plain connection (custom-object-client.ts).
import type {
  AppsV1Api,
  CoreV1Api,
  V1Deployment,
  V1PodList,
  V1PodTemplate,
  V1ReplicaSet,
  V1ReplicaSetList,
  V1Service,
} from '@kubernetes/client-node';
import type { ObjectReadClients } from './object-read-clients.ts';

/** Where the reads are sent: a GET of an API path, answered with its JSON (CustomObjectClient.readPath). */
type ReadPath = (path: string) => Promise<unknown>;

/** Which objects: client-node's request fields the readers pass; any other field is refused by the type. */
interface NamedRef {
  namespace: string;
  name: string;
}
interface ListRef {
  namespace: string;
  labelSelector?: string;
}

const part = (value: string): string => encodeURIComponent(value);

/**
 * The object's metadata timestamps as client-node's typed clients leave them after the JSON round trip
 * every reader makes (toPlainObject): client-node makes a Date of each, which prints with milliseconds
 * (`…T07:24:15.000Z`) where the API server wrote `…T07:24:15Z`. They are the only Date fields the views
 * pass on (a ReplicaSet's or pod's age and `createdAt`); the rest is read as sent.
 */
function withClientNodeTimestamps<T>(object: unknown): T {
  const metadata = (object as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  if (metadata !== undefined && metadata !== null)
    for (const field of ['creationTimestamp', 'deletionTimestamp'])
      if (typeof metadata[field] === 'string') metadata[field] = new Date(metadata[field]).toJSON();
  // Not a client-node model, but the same JSON once a reader has made it plain.
  return object as T;
}

function listWithClientNodeTimestamps<T>(list: unknown): T {
  for (const item of (list as { items?: unknown[] }).items ?? []) withClientNodeTimestamps(item);
  return list as T;
}

function listQuery(ref: ListRef): string {
  return ref.labelSelector === undefined ? '' : `?labelSelector=${part(ref.labelSelector)}`;
}

/** CoreV1Api's reads of a rollout's view. */
export class PlainCoreReads implements Pick<
  CoreV1Api,
  'listNamespacedPod' | 'readNamespacedService' | 'readNamespacedPodTemplate'
> {
  constructor(private readonly read: ReadPath) {}

  async listNamespacedPod(ref: ListRef): Promise<V1PodList> {
    return listWithClientNodeTimestamps(
      await this.read(`/api/v1/namespaces/${part(ref.namespace)}/pods${listQuery(ref)}`),
    );
  }

  async readNamespacedService(ref: NamedRef): Promise<V1Service> {
    return withClientNodeTimestamps(
      await this.read(`/api/v1/namespaces/${part(ref.namespace)}/services/${part(ref.name)}`),
    );
  }

  async readNamespacedPodTemplate(ref: NamedRef): Promise<V1PodTemplate> {
    return withClientNodeTimestamps(
      await this.read(`/api/v1/namespaces/${part(ref.namespace)}/podtemplates/${part(ref.name)}`),
    );
  }
}

/** AppsV1Api's reads of a rollout's view. */
export class PlainAppsReads implements Pick<
  AppsV1Api,
  'listNamespacedReplicaSet' | 'readNamespacedReplicaSet' | 'readNamespacedDeployment'
> {
  constructor(private readonly read: ReadPath) {}

  async listNamespacedReplicaSet(ref: ListRef): Promise<V1ReplicaSetList> {
    return listWithClientNodeTimestamps(
      await this.read(`/apis/apps/v1/namespaces/${part(ref.namespace)}/replicasets${listQuery(ref)}`),
    );
  }

  async readNamespacedReplicaSet(ref: NamedRef): Promise<V1ReplicaSet> {
    return withClientNodeTimestamps(
      await this.read(`/apis/apps/v1/namespaces/${part(ref.namespace)}/replicasets/${part(ref.name)}`),
    );
  }

  async readNamespacedDeployment(ref: NamedRef): Promise<V1Deployment> {
    return withClientNodeTimestamps(
      await this.read(`/apis/apps/v1/namespaces/${part(ref.namespace)}/deployments/${part(ref.name)}`),
    );
  }
}

/** The built-in halves of {@link ObjectReadClients}, reading through `read`. */
export function plainBuiltinReads(read: ReadPath): Pick<ObjectReadClients, 'core' | 'apps'> {
  return { core: new PlainCoreReads(read), apps: new PlainAppsReads(read) };
}
