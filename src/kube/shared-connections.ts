// One connection pool per API server and credentials, instead of the new one client-node makes per request.
import { createHash } from 'node:crypto';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';

/** What client-node's per-request dispatcher factory looks like (private in its types, public in JS). */
interface DispatcherFactory {
  createDispatcher(cluster: Cluster | null, agentOptions: Record<string, unknown>): unknown;
}

/** An undici dispatcher as far as closing an unused one goes. */
interface Closable {
  close?: () => Promise<void>;
}

/** Pools kept per config: one per (server, TLS material); older ones are closed when credentials rotate. */
const KEPT_POOLS = 4;

const shared = new WeakSet<KubeConfig>();
/** Each shared config's pools, so a config no longer used (a cluster unregistered) can close them. */
const poolsOf = new WeakMap<KubeConfig, Map<string, unknown>>();

/**
 * Makes every client built from `kubeConfig` share keep-alive connections. client-node 2 builds a new
 * undici Agent for every request whose cluster has any TLS option (a CA, a client certificate, or
 * insecure-skip-tls-verify, i.e. every real cluster): each request then opens its own TCP connection
 * and, over https, pays a full TLS handshake. A sync writing 5,000 objects spent more CPU connecting than
 * on anything else. The pool is keyed by the dispatcher options client-node derives for the request
 * (server, proxy and a digest of the TLS material, which it re-reads from files on every request), so
 * rotated certificates get a new pool. Idempotent.
 */
export function shareConnections(kubeConfig: KubeConfig): KubeConfig {
  if (shared.has(kubeConfig)) return kubeConfig;
  shared.add(kubeConfig);
  const factory = kubeConfig as unknown as DispatcherFactory;
  const create = factory.createDispatcher.bind(kubeConfig);
  const pools = new Map<string, unknown>();
  poolsOf.set(kubeConfig, pools);
  factory.createDispatcher = (cluster, agentOptions) => {
    const options = kubeConfig.createDispatcherOptions(cluster, agentOptions);
    if (options.type === 'none') return undefined;
    const key = createHash('sha256')
      .update(JSON.stringify([cluster?.server, cluster?.proxyUrl, options]))
      .digest('hex');
    const known = pools.get(key);
    if (known !== undefined) {
      // Most recently used last, so eviction takes the pool of credentials no longer in use.
      pools.delete(key);
      pools.set(key, known);
      return known;
    }
    const pool = create(cluster, agentOptions);
    pools.set(key, pool);
    for (const [oldKey, old] of pools) {
      if (pools.size <= KEPT_POOLS) break;
      pools.delete(oldKey);
      // Requests still running on it finish first (undici's close waits for them).
      void (old as Closable).close?.().catch(() => undefined);
    }
    return pool;
  };
  return kubeConfig;
}

/**
 * Closes every pool `kubeConfig`'s clients share (requests in flight finish first), for a connection that
 * is dropped, e.g. a cluster whose registration was removed. A later request would open a new pool.
 */
export async function closeSharedConnections(kubeConfig: KubeConfig): Promise<void> {
  const pools = poolsOf.get(kubeConfig);
  if (pools === undefined) return;
  const closing = [...pools.values()];
  pools.clear();
  await Promise.all(closing.map((pool) => (pool as Closable).close?.().catch(() => undefined)));
}
