// A cluster's own KubeConnection (clients, rate limit, connection pool), built from a registration, and dropping it.
import { KubeConfig } from '@kubernetes/client-node';
import {
  createKubeClients,
  currentNamespace,
  loadKubeConfig,
  useContext,
  type KubeConnection,
} from '../kube/client.ts';
import type { RateLimitSettings } from '../kube/request-rate-limit.ts';
import { closeSharedConnections } from '../kube/shared-connections.ts';
import type { ClusterConnectionSpec } from './argocd-cluster-secret.ts';

/**
 * A connection made from an Argo CD cluster Secret's content: a KubeConfig held only in memory (the
 * token and key never touch a file), its own clients, pool and rate limit.
 */
export function connectionFromSpec(
  spec: ClusterConnectionSpec,
  rateLimit: RateLimitSettings | undefined,
): KubeConnection {
  const kubeConfig = new KubeConfig();
  const plainHttp = spec.server.startsWith('http://');
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: spec.name,
        server: spec.server,
        // client-node refuses http:// unless verification is off (there is nothing to verify over http).
        skipTLSVerify: spec.insecure || plainHttp,
        ...(spec.caData !== undefined ? { caData: spec.caData } : {}),
        ...(spec.serverName !== undefined ? { tlsServerName: spec.serverName } : {}),
      },
    ],
    users: [
      {
        name: spec.name,
        ...(spec.bearerToken !== undefined ? { token: spec.bearerToken } : {}),
        ...(spec.certData !== undefined ? { certData: spec.certData } : {}),
        ...(spec.keyData !== undefined ? { keyData: spec.keyData } : {}),
      },
    ],
    contexts: [{ name: spec.name, cluster: spec.name, user: spec.name }],
    currentContext: spec.name,
  });
  return {
    clients: createKubeClients(kubeConfig, { rateLimit }),
    namespace: 'default',
    source: 'argocd-secret',
    origin: spec.server,
  };
}

/**
 * A connection to a kubeconfig context (`clusters[].context`), from `kubeconfig` when given, else found
 * as the local connection's is (KUBECONFIG, ~/.kube/config). Throws the kube lookup errors (a missing file,
 * an unknown context): the caller turns them into an Invalid registration.
 */
export function connectionFromContext(
  entry: { context: string; kubeconfig?: string | undefined },
  fallbackKubeconfig: string | undefined,
  rateLimit: RateLimitSettings | undefined,
): KubeConnection {
  const file = entry.kubeconfig ?? fallbackKubeconfig;
  const loaded = loadKubeConfig(file !== undefined && file !== '' ? { kubeconfig: file } : {});
  useContext(loaded.kubeConfig, entry.context, loaded.origin);
  return {
    clients: createKubeClients(loaded.kubeConfig, { rateLimit }),
    namespace: currentNamespace(loaded.kubeConfig),
    source: loaded.source,
    origin: loaded.origin,
  };
}

/** The API server address of a connection (what a ClusterHandle shows as `server`). */
export function serverOf(kube: KubeConnection): string {
  return kube.clients.kubeConfig.getCurrentCluster()?.server ?? '';
}

/** Closes the connection's pooled sockets: the cluster was unregistered or its registration replaced. */
export async function dropConnection(kube: KubeConnection): Promise<void> {
  await closeSharedConnections(kube.clients.kubeConfig);
}
