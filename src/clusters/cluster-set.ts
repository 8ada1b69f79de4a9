// The clusters one Rollgate deployment serves: the local one (where it runs) and the registered others.
import type { KubeConnection } from '../kube/client.ts';

/** The name of the cluster Rollgate runs in, as Argo CD names it; `kubernetes.clusterName` may change it. */
export const LOCAL_CLUSTER = 'in-cluster';

/** Where a cluster's registration came from. */
export type ClusterOrigin = 'local' | 'kubeconfig' | 'argocd-secret';

/** One registered cluster and its own connection (own clients, rate limit and connection pool). */
export interface ClusterHandle {
  /** Unique within the deployment; what a source's `cluster:` and a Fleet's `clusters:` name. */
  readonly name: string;
  readonly origin: ClusterOrigin;
  /** The API server's address (never a credential). */
  readonly server: string;
  readonly kube: KubeConnection;
}

/** Whether Rollgate can talk to a cluster now; what /readyz, the dashboard and `rollgate list` show. */
export type ClusterPhase = 'Ready' | 'Unreachable' | 'Unauthorized' | 'Invalid';

export interface ClusterState {
  readonly name: string;
  readonly phase: ClusterPhase;
  /** Why, in words a platform team can act on (no token, no key). */
  readonly message: string;
  /** When the phase last changed (ISO 8601). */
  readonly since: string;
}

export type ClusterEvent =
  | { readonly kind: 'added'; readonly cluster: ClusterHandle }
  | { readonly kind: 'changed'; readonly cluster: ClusterHandle; readonly previous: ClusterHandle }
  | { readonly kind: 'removed'; readonly cluster: ClusterHandle };

/**
 * The clusters known now. Registrations come and go at run time (an Argo CD cluster Secret added or
 * deleted): a listener hears each change once, after `current()` already reflects it.
 */
export interface ClusterSet {
  readonly localName: string;
  local(): ClusterHandle;
  get(name: string): ClusterHandle | undefined;
  current(): readonly ClusterHandle[];
  subscribe(listener: (event: ClusterEvent) => void): () => void;
  /** What the set's own probes last saw of a cluster (a registry's set; a fixed set has no probes). */
  state?(name: string): ClusterState | undefined;
}

/** A set that never changes: the one-cluster process of today, tests, the demo. */
export function fixedClusterSet(local: ClusterHandle, others: readonly ClusterHandle[] = []): ClusterSet {
  const all = [local, ...others];
  return {
    localName: local.name,
    local: () => local,
    get: (name) => all.find((cluster) => cluster.name === name),
    current: () => all,
    subscribe: () => () => undefined,
  };
}
