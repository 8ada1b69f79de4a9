// Wires the pure route translators (src/traffic) to the route writer (src/reconciler): one router per rollout, from its spec.
import type { Logger } from '../log/logger.ts';
import type { KubeClients } from '../kube/client.ts';
import { RouteWriter, type RouteWriterOptions } from '../reconciler/route-writer.ts';
import {
  RefusingTrafficRouter,
  RouteTrafficRouter,
  type RolloutRouteTargets,
} from '../reconciler/traffic-router-of-routes.ts';
import type { TrafficRouterFactory } from '../reconciler/traffic-router.ts';
import type { Rollout } from '../manifest/rollout.ts';
import { RouteTranslationError, routesOfRollout } from '../traffic/index.ts';

/**
 * The router of each rollout, through the provider table (src/traffic/traffic-providers.ts): none
 * without trafficRouting, one that refuses with the reason when the configuration cannot be followed
 * (the rollout waits with that message), else one writing its routes. One writer (and its cache of
 * the API versions served) is shared by all rollouts.
 */
export function trafficRouterFactory(
  clients: KubeClients,
  logger: Logger,
  options: RouteWriterOptions = {},
): TrafficRouterFactory {
  const writer = new RouteWriter(clients, options);
  return (rollout) => {
    const routes = routeTargetsOf(rollout);
    if (routes === undefined) return undefined;
    if (routes instanceof RouteTranslationError) return new RefusingTrafficRouter(routes);
    return new RouteTrafficRouter(
      writer,
      routes,
      logger.child({ rollout: `${rollout.metadata.namespace ?? 'default'}/${rollout.metadata.name}` }),
    );
  };
}

/**
 * A rollout's route objects through the provider table, as the router writes them and `rollgate
 * status` reads them back; undefined without trafficRouting, the reason when it cannot be followed.
 */
export function routeTargetsOf(rollout: Rollout): RolloutRouteTargets | RouteTranslationError | undefined {
  const routes = routesOfRollout(rollout);
  if (routes === undefined || routes instanceof RouteTranslationError) return routes;
  return {
    providers: routes.providers,
    targets: routes.edits,
    total: routes.total,
    canaryService: routes.canaryService,
    stableService: routes.stableService,
    experimentDestinations: routes.experimentDestinations,
  };
}
