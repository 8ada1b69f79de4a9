// Shared sub-step parts: header and mirror routes retried while the router fails, removed when the canary ends.
import { removeManagedRoutes, resendRoutes, type RouteAction } from '../plan-managed-routes.ts';
import { routerErrorOf, routerRetryAtMs } from '../pass/finish-pass.ts';
import type { Pass, PassState } from '../pass/pass.ts';

/**
 * The removals of every route the planner set (status.managedRoutes) and the state that records them:
 * a removal is sent once, sent again while the router fails (when its retry is due), and forgotten once
 * a pass sees no router error after it. Nothing when no route is recorded.
 */
export function managedRouteRemovals(pass: Pass): {
  actions: RouteAction[];
  state: Pick<PassState, 'managedRoutes'>;
} {
  const { context } = pass;
  if (pass.state.managedRoutes.length === 0) return { actions: [], state: { managedRoutes: [] } };
  const retryAt = routerRetryAtMs(context);
  const { actions, records } = removeManagedRoutes(pass.state.managedRoutes, {
    failing: routerErrorOf(context) !== undefined,
    retryDue: retryAt === undefined || context.now.getTime() >= retryAt,
  });
  return { actions, state: { managedRoutes: records } };
}

/** While the router fails and its retry is due, the routes in force are sent again (with the weights). */
export function managedRouteRetries(pass: Pass, index: number): RouteAction[] {
  const { context } = pass;
  if (routerErrorOf(context) === undefined) return [];
  const retryAt = routerRetryAtMs(context);
  if (retryAt !== undefined && context.now.getTime() < retryAt) return [];
  return resendRoutes(pass.state.managedRoutes, context.steps, index);
}
