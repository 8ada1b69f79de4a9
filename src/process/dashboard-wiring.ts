// Builds the dashboard for a process or for `rollgate dashboard`: its access, and its Rollout watch (restarting).
import type { Clock } from '../clock/clock.ts';
import type { KubeClients } from '../kube/client.ts';
import type { Logger } from '../log/logger.ts';
import type { DashboardAccess } from '../server/dashboard/dashboard-access.ts';
import { createDashboard, type Dashboard } from '../server/dashboard/dashboard.ts';
import type { RollgateConfig } from '../config/schema.ts';
import type { BuiltPromotion } from '../promoter/build-promotions.ts';
import { promotionsReader, type ReadPromotions } from '../server/dashboard/promotion-reads.ts';
import type { WatchRollouts } from '../server/dashboard/rollout-stream.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { watchPathIn, watchWithRestart } from '../kube/watch-with-restart.ts';

const ROLLOUTS_PATH = `/apis/${ROLLGATE_API_GROUP}/v1alpha1/rollouts`;

/**
 * A watch on every Rollout of the cluster (or of `namespace`), started again after each end (the API server
 * closes watches).
 */
export function rolloutWatch(clients: KubeClients, logger: Logger, namespace = ''): WatchRollouts {
  return ({ onEvent, onRestarted }) =>
    watchWithRestart<unknown>({
      kubeConfig: clients.kubeConfig,
      path: watchPathIn(ROLLOUTS_PATH, namespace),
      query: {},
      onEvent,
      onRestarted,
      onEnded: (err, restart) => {
        if (err)
          logger.warn(
            { dependency: 'kubernetes', err: (err as Error).message, attempt: restart.attempt },
            'dashboard: rollout watch ended; restarting it',
          );
      },
    });
}

/** The dashboard over these clients. */
export function wireDashboard(options: {
  clients: KubeClients;
  access: DashboardAccess;
  clock: Clock;
  logger: Logger;
  /** `kubernetes.watchNamespace`: only its Rollouts are listed, watched and acted on; empty = all. */
  namespace?: string;
  promotions?: ReadPromotions;
}): Dashboard {
  const { access } = options;
  if (!access.openReads && access.readToken === undefined && !access.actions.enabled)
    options.logger.warn(
      'dashboard: the server is reachable from other machines and no dashboard token is set, so every dashboard read answers 401; set dashboard.readTokenEnv or dashboard.readTokenFile, or bind server.host to 127.0.0.1',
    );
  return createDashboard({
    ...options,
    watchRollouts: rolloutWatch(options.clients, options.logger, options.namespace),
  });
}

/** The promotions view over the configured sources and promotions (already built, with their forges). */
export function configuredPromotions(
  config: RollgateConfig,
  built: readonly BuiltPromotion[],
  clients: KubeClients,
  clock: Clock,
): ReadPromotions {
  return promotionsReader({
    clients,
    clock,
    stateNamespace: config.kubernetes.stateNamespace,
    namespace: config.kubernetes.watchNamespace,
    sources: config.sources.map((s) => ({
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
