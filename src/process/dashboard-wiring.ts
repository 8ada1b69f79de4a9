// Builds the dashboard for a process or for `rollgate dashboard`: its access, and its Rollout watch (restarting).
import type { Clock } from '../clock/clock.ts';
import {
  fixedClusterSet,
  LOCAL_CLUSTER,
  type ClusterHandle,
  type ClusterSet,
  type ClusterState,
} from '../clusters/cluster-set.ts';
import type { KubeClients } from '../kube/client.ts';
import type { Logger } from '../log/logger.ts';
import type { DashboardAccess } from '../server/dashboard/dashboard-access.ts';
import { createDashboard, type Dashboard } from '../server/dashboard/dashboard.ts';
import type { RollgateConfig, SourceConfig } from '../config/schema.ts';
import type { BuiltPromotion } from '../promoter/build-promotions.ts';
import { promotionsReader, type ReadPromotions } from '../server/dashboard/promotion-reads.ts';
import type { WatchRollouts } from '../server/dashboard/rollout-stream.ts';
import {
  drivenApiOf,
  drivenPath,
  syncedRolloutApi,
  type DrivenApi,
  type DrivenGroup,
} from '../manifest/driven-api.ts';
import { watchPathIn, watchWithRestart } from '../kube/watch-with-restart.ts';
import { BOTH_APIS } from '../views/rollout-list.ts';

/**
 * A watch on every Rollout of the cluster (or of `namespace`) in each of `apis` (one watch per group),
 * each started again after its end (the API server closes watches). A group whose CRD is missing keeps
 * its watch retrying, so its Rollouts appear once the CRD is installed.
 */
export function rolloutWatch(
  clients: KubeClients,
  logger: Logger,
  namespace = '',
  apis: readonly DrivenApi[] = BOTH_APIS,
): WatchRollouts {
  return async ({ onEvent, onRestarted }) => {
    const watches = await Promise.all(
      apis.map((api) =>
        watchWithRestart<unknown>({
          kubeConfig: clients.kubeConfig,
          path: watchPathIn(drivenPath(api, 'rollouts'), namespace),
          query: {},
          onEvent,
          onRestarted,
          onEnded: (err, restart) => {
            if (err)
              logger.warn(
                {
                  dependency: 'kubernetes',
                  group: api.group,
                  err: (err as Error).message,
                  attempt: restart.attempt,
                },
                'dashboard: rollout watch ended; restarting it',
              );
          },
        }),
      ),
    );
    return { stop: () => watches.forEach((watch) => watch.stop()) };
  };
}

/** Today's one cluster as a set: the local cluster over `clients`, named `name`. */
export function localClusterSet(clients: KubeClients, name = LOCAL_CLUSTER): ClusterSet {
  const local: ClusterHandle = {
    name,
    origin: 'local',
    server: clients.kubeConfig.getCurrentCluster()?.server ?? '',
    kube: { clients, namespace: 'default', source: 'in-cluster', origin: 'the process' },
  };
  return fixedClusterSet(local);
}

/** The dashboard over these clients, or over every cluster of `clusters`. */
export function wireDashboard(options: {
  /** The local cluster's clients: the one cluster shown when `clusters` is not given. */
  clients: KubeClients;
  /** Every cluster to show (grouped by cluster on the page); default: the local one over `clients`. */
  clusters?: ClusterSet;
  /** Each cluster's state for its heading (the registry's probes); without it, headings show none. */
  clusterState?: (name: string) => ClusterState | undefined;
  access: DashboardAccess;
  clock: Clock;
  logger: Logger;
  /** `kubernetes.watchNamespace`: only its Rollouts are listed, watched and acted on; empty = all. */
  namespace?: string;
  promotions?: ReadPromotions;
  /**
   * The groups whose Rollouts it lists, watches and acts on: a process's `controller.groups`; unset (as
   * `rollgate dashboard`), both, as the CLI reads.
   */
  groups?: readonly DrivenGroup[];
}): Dashboard {
  const { access } = options;
  if (!access.openReads && access.readToken === undefined && !access.actions.enabled)
    options.logger.warn(
      'dashboard: the server is reachable from other machines and no dashboard token is set, so every dashboard read answers 401; set dashboard.readTokenEnv or dashboard.readTokenFile, or bind server.host to 127.0.0.1',
    );
  const apis = options.groups?.map(drivenApiOf) ?? BOTH_APIS;
  const logger = options.logger;
  return createDashboard({
    ...options,
    clusters: options.clusters ?? localClusterSet(options.clients),
    apis,
    watchRollouts: (cluster) =>
      rolloutWatch(cluster.kube.clients, logger.child({ cluster: cluster.name }), options.namespace, apis),
  });
}

/** The promotions view over the configured sources and promotions (already built, with their forges). */
export function configuredPromotions(
  config: RollgateConfig,
  built: readonly BuiltPromotion[],
  clients: KubeClients,
  clock: Clock,
  /** The sources now (the registry's: GitSource objects too); default the configuration's. */
  current: () => readonly SourceConfig[] = () => config.sources,
): ReadPromotions {
  return promotionsReader({
    clients,
    clock,
    stateNamespace: config.kubernetes.stateNamespace,
    namespace: config.kubernetes.watchNamespace,
    api: syncedRolloutApi(config.controller.groups),
    sources: () =>
      current().map((s) => ({
        name: s.name,
        branch: s.branch,
        path: s.path,
        ...(s.namespace !== undefined ? { namespace: s.namespace } : {}),
      })),
    promotions: built.map((p) => ({
      name: p.spec.name,
      from: p.spec.fromSource,
      to: p.spec.toSource,
      ...(p.spec.rollouts !== undefined ? { rollouts: p.spec.rollouts } : {}),
      forge: p.forge,
    })),
  });
}
