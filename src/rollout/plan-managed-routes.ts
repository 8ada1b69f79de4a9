// Sub-planner: header and mirror routes (setHeaderRoute / setMirrorRoute steps) and their removal.
import type { ManagedRouteRecord } from './rollout-plan.ts';
import type { SetHeaderRouteAction, SetMirrorRouteAction } from './rollout-action.ts';
import type { PlannedStep } from './rollout-context.ts';

export type RouteAction = SetHeaderRouteAction | SetMirrorRouteAction;
type RouteStep = Extract<PlannedStep, { kind: 'setHeaderRoute' | 'setMirrorRoute' }>;

/** Reads status.managedRoutes, dropping entries that are not route records. */
export function readManagedRoutes(value: unknown): ManagedRouteRecord[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown): ManagedRouteRecord[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { name, kind, removed } = entry as Record<string, unknown>;
    if (typeof name !== 'string' || (kind !== 'setHeaderRoute' && kind !== 'setMirrorRoute')) return [];
    return [{ name, kind, ...(removed === true ? { removed: true } : {}) }];
  });
}

/** The action of a route step (a step without `match` removes the route, as in Argo). */
export function routeStepAction(step: RouteStep): RouteAction {
  if (step.kind === 'setHeaderRoute') {
    return {
      kind: 'setHeaderRoute',
      name: step.route.name,
      ...(step.route.match !== undefined ? { match: step.route.match } : {}),
    };
  }
  return {
    kind: 'setMirrorRoute',
    name: step.route.name,
    ...(step.route.match !== undefined ? { match: step.route.match } : {}),
    ...(step.route.percentage !== undefined ? { percentage: step.route.percentage } : {}),
  };
}

/** The record after a route step ran: the route is set, or removed when the step has no match. */
export function recordRouteStep(
  records: readonly ManagedRouteRecord[],
  step: RouteStep,
): ManagedRouteRecord[] {
  const others = records.filter((r) => !(r.name === step.route.name && r.kind === step.kind));
  return [
    ...others,
    { name: step.route.name, kind: step.kind, ...(step.route.match === undefined ? { removed: true } : {}) },
  ];
}

/**
 * Removing every route the planner set: one removal per route not yet removed (marked removed); a
 * removal already sent is dropped from the record once the router reports no error, and sent again
 * while it fails (when `retryDue`). Returns the actions and the next record.
 */
export function removeManagedRoutes(
  records: readonly ManagedRouteRecord[],
  router: { failing: boolean; retryDue: boolean },
): { actions: RouteAction[]; records: ManagedRouteRecord[] } {
  const actions: RouteAction[] = [];
  const next: ManagedRouteRecord[] = [];
  for (const record of records) {
    if (record.removed === true && !router.failing) continue;
    if (record.removed !== true || router.retryDue) actions.push({ kind: record.kind, name: record.name });
    next.push({ name: record.name, kind: record.kind, removed: true });
  }
  return { actions, records: next };
}

/**
 * The routes to send again while the router fails: each recorded route not removed, as its last step
 * before `index` set it. A failed route step has already completed (as Argo), so this is its retry.
 */
export function resendRoutes(
  records: readonly ManagedRouteRecord[],
  steps: readonly PlannedStep[],
  index: number,
): RouteAction[] {
  const actions: RouteAction[] = [];
  for (const record of records) {
    if (record.removed === true) continue;
    for (let i = Math.min(index, steps.length) - 1; i >= 0; i--) {
      const step = steps[i];
      if (step !== undefined && step.kind === record.kind && step.route.name === record.name) {
        actions.push(routeStepAction(step));
        break;
      }
    }
  }
  return actions;
}
