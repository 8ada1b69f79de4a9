// What every Rollgate process opens once: logger, Redis, Kubernetes clients, the clock; and closes on exit.
import type { Redis } from 'ioredis';
import { systemClock, type Clock } from '../clock/clock.ts';
import { fixedClusterSet, LOCAL_CLUSTER, type ClusterSet } from '../clusters/cluster-set.ts';
import type { RollgateConfig } from '../config/index.ts';
import { openClusterSet } from '../clusters/open-cluster-set.ts';
import type { RunningClusterSet } from '../clusters/cluster-registry.ts';
import { connectKube, useContext, type KubeConnection } from '../kube/client.ts';
import { createLogger, type Logger } from '../log/logger.ts';
import { reportRedisAvailability } from '../queue/redis-availability.ts';
import { createRedisConnection } from '../queue/redis-connection.ts';
import { redisOptions } from '../queue/redis-options.ts';

export interface Runtime {
  config: RollgateConfig;
  logger: Logger;
  redis: Redis;
  /** The local cluster's connection (where Rollgate runs): `clusters.local().kube`. */
  kube: KubeConnection;
  /**
   * Every cluster the process serves, the local one included; registrations may come and go at run time
   * (start-process.ts starts and stops each cluster's reconcilers as they do).
   */
  clusters: ClusterSet;
  clock: Clock;
  close(): Promise<void>;
}

export interface RuntimeOverrides {
  logger?: Logger;
  clock?: Clock;
  /** An already-built connection (tests and the demo pass the sandbox's). */
  kube?: KubeConnection;
  /**
   * The clusters to serve (the registry's set, or tests' several sandboxes). Default: the local connection
   * alone, named `in-cluster` (see {@link localClusterSet}).
   */
  clusters?: (local: KubeConnection) => ClusterSet;
}

/** The one-cluster set of today: the local connection, named as Argo CD names the cluster it runs in. */
export function localClusterSet(kube: KubeConnection, name: string = LOCAL_CLUSTER): ClusterSet {
  return fixedClusterSet({ name, origin: 'local', server: kube.origin, kube });
}

/** Opens the shared connections. Nothing is started yet; `startProcess` decides what runs. */
export function openRuntime(config: RollgateConfig, overrides: RuntimeOverrides = {}): Runtime {
  const logger =
    overrides.logger ??
    // Synchronous: a stop that cannot finish ends with process.exit, right after saying what it abandoned.
    createLogger({ level: config.log.level, format: config.log.format, name: 'rollgate', sync: true });
  const kube =
    overrides.kube ??
    connectKube({
      ...(config.kubernetes.kubeconfig ? { kubeconfig: config.kubernetes.kubeconfig } : {}),
      ...(config.kubernetes.context ? { context: config.kubernetes.context } : {}),
      rateLimit: { qps: config.kubernetes.qps, burst: config.kubernetes.burst },
    });
  if (overrides.kube && config.kubernetes.context)
    useContext(kube.clients.kubeConfig, config.kubernetes.context, kube.origin);
  // Reads the Redis password file or variable now: a missing one stops the start, naming the key.
  const redis = createRedisConnection(redisOptions(config.redis));
  reportRedisAvailability(redis, { logger });
  // The set's local cluster is the one connection the rest of the process (CRDs, state, GitSources) uses.
  const clusters = overrides.clusters?.(kube) ?? localClusterSet(kube, config.kubernetes.clusterName);
  return {
    config,
    logger,
    redis,
    kube: clusters.local().kube,
    clusters,
    clock: overrides.clock ?? systemClock,
    async close() {
      redis.disconnect();
    },
  };
}

/** Whether the configuration registers clusters beside the local one (contexts or Argo CD cluster Secrets). */
export function registersClusters(config: RollgateConfig): boolean {
  return config.clusters.length > 0 || config.clusterSecrets.enabled;
}

/**
 * The runtime with the clusters the configuration registers (`clusters:`, `clusterSecrets:`): the registry's
 * set replaces the one-cluster set and is closed with the runtime. Without registrations, or when the caller
 * chose the set itself, the runtime as it is (no Secret watch, no probe beyond the dependency monitor's).
 */
export async function withRegisteredClusters(
  runtime: Runtime,
  options: { chosen?: boolean } = {},
): Promise<Runtime & { registered?: RunningClusterSet }> {
  if (!registersClusters(runtime.config) || options.chosen === true) return runtime;
  let registered: RunningClusterSet;
  try {
    registered = await openClusterSet(runtime.config, runtime.kube, {
      clock: runtime.clock,
      logger: runtime.logger.child({ component: 'clusters' }),
    });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  return {
    ...runtime,
    clusters: registered,
    registered,
    async close() {
      await registered.close();
      await runtime.close();
    },
  };
}

/** {@link openRuntime}, then {@link withRegisteredClusters}: what `rollgate run|poller|reconciler` open. */
export async function openRuntimeWithClusters(
  config: RollgateConfig,
  overrides: RuntimeOverrides = {},
): Promise<Runtime & { registered?: RunningClusterSet }> {
  return withRegisteredClusters(openRuntime(config, overrides), { chosen: overrides.clusters !== undefined });
}
