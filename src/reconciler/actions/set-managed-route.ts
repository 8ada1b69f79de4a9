// setHeaderRoute / setMirrorRoute: tell the router to add, replace or remove a managed route; a failure is reported like a weight's.
import type { SetHeaderRouteAction, SetMirrorRouteAction } from '../../rollout/index.ts';
import type { ActionContext, HandledAction } from './action-handler.ts';

/** The handler shape of the two managed-route actions (they join the action table with the planner's union). */
export type ManagedRouteHandler<A> = (action: A, context: ActionContext) => Promise<HandledAction>;

async function callRouter(
  kind: 'header' | 'mirror',
  action: { name: string; match?: unknown },
  context: ActionContext,
  call: () => Promise<void> | undefined,
): Promise<HandledAction> {
  const { api, read, namespace, logger, events, router } = context;
  const target = `${action.name}${action.match === undefined ? ' (remove)' : ''}`;
  const rollout = read.observed.rollout;
  try {
    const pending = call();
    if (pending === undefined)
      throw new Error(
        router === undefined
          ? `${kind} route "${action.name}": no traffic router is configured`
          : `${kind} route "${action.name}": the ${router.type} router has no ${kind} routes`,
      );
    await pending;
    return { target, result: 'unchanged' };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    logger.warn({ err, rollout: rollout.metadata.name, route: action.name }, `${kind} route failed`);
    await events.record(
      {
        apiVersion: api.apiVersion,
        kind: 'Rollout',
        namespace,
        name: rollout.metadata.name,
        uid: rollout.metadata.uid,
      },
      { type: 'Warning', reason: 'TrafficRoutingError', message },
    );
    return { target, result: 'failed', routerError: message };
  }
}

/**
 * Sets (or, `match` absent, removes) a header route through the rollout's router. A failure is
 * returned as `routerError`, as for weights: recorded in status, retried by the planner, never
 * stopping the pass (an abort above all).
 */
export const setHeaderRoute: ManagedRouteHandler<SetHeaderRouteAction> = (action, context) =>
  callRouter('header', action, context, () =>
    context.router?.setHeaderRoute?.({ name: action.name, match: action.match }),
  );

/** Sets (or removes) a mirror route through the rollout's router; failures as for {@link setHeaderRoute}. */
export const setMirrorRoute: ManagedRouteHandler<SetMirrorRouteAction> = (action, context) =>
  callRouter('mirror', action, context, () =>
    context.router?.setMirrorRoute?.({
      name: action.name,
      match: action.match,
      percentage: action.percentage,
    }),
  );
