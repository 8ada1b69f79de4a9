// A ClusterSet of kubeconfigs (the sandboxes of a test), which the test may add to and remove from while
// Rollgate runs: what the registry's openClusterSet (src/clusters, `clusters:` and Argo CD cluster Secrets)
// hands a process, reduced to what the many-cluster tests and benches need.
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterEvent, ClusterHandle, ClusterSet } from '../../src/clusters/cluster-set.ts';
import { LOCAL_CLUSTER } from '../../src/clusters/cluster-set.ts';
import { createKubeClients, type KubeConnection } from '../../src/kube/client.ts';

export interface MutableClusterSet extends ClusterSet {
  add(name: string, kubeConfig: KubeConfig): ClusterHandle;
  remove(name: string): void;
}

/** A cluster of its own connection: own clients, connection pool and (with `qps`) rate limit. */
export function kubeconfigCluster(name: string, kubeConfig: KubeConfig, qps = 0): ClusterHandle {
  const server = kubeConfig.getCurrentCluster()?.server ?? '';
  const kube: KubeConnection = {
    clients: createKubeClients(kubeConfig, qps > 0 ? { rateLimit: { qps, burst: 100 } } : {}),
    namespace: 'default',
    source: 'flag',
    origin: server,
  };
  return { name, origin: 'kubeconfig', server, kube };
}

/** The local connection (as `in-cluster`) and `others`, each a kubeconfig; more may be added later. */
export function kubeconfigClusterSet(
  local: KubeConnection,
  others: ReadonlyArray<{ name: string; kubeConfig: KubeConfig }>,
): MutableClusterSet {
  const localHandle: ClusterHandle = {
    name: LOCAL_CLUSTER,
    origin: 'local',
    server: local.origin,
    kube: local,
  };
  const all = new Map<string, ClusterHandle>([[LOCAL_CLUSTER, localHandle]]);
  for (const other of others) all.set(other.name, kubeconfigCluster(other.name, other.kubeConfig));
  const listeners = new Set<(event: ClusterEvent) => void>();
  const tell = (event: ClusterEvent): void => {
    for (const listener of listeners) listener(event);
  };
  return {
    localName: LOCAL_CLUSTER,
    local: () => localHandle,
    get: (name) => all.get(name),
    current: () => [...all.values()],
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    add(name, kubeConfig) {
      const cluster = kubeconfigCluster(name, kubeConfig);
      const previous = all.get(name);
      all.set(name, cluster);
      tell(previous ? { kind: 'changed', cluster, previous } : { kind: 'added', cluster });
      return cluster;
    },
    remove(name) {
      const cluster = all.get(name);
      if (cluster === undefined || name === LOCAL_CLUSTER) return;
      all.delete(name);
      tell({ kind: 'removed', cluster });
    },
  };
}
