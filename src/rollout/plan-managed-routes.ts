// Sub-planner: header and mirror routes (setHeaderRoute / setMirrorRoute steps) and their removal.
import type { ManagedRouteRecord } from './rollout-plan.ts';
import type { SetHeaderRouteAction, SetMirrorRouteAction } from './rollout-action.ts';
import type { PlannedRoute, PlannedStep } from './rollout-context.ts';

export type RouteAction = SetHeaderRouteAction | SetMirrorRouteAction;

/** Every route a step sets: the step itself when it is a route, then the routes beside its kind. */
export function routesOf(step: PlannedStep): PlannedRoute[] {
  const routes = step.routes ?? [];
  if (step.kind === 'setHeaderRoute') return [{ kind: step.kind, route: step.route }, ...routes];
  if (step.kind === 'setMirrorRoute') return [{ kind: step.kind, route: step.route }, ...routes];
  return [...routes];
}

/**
 * Whether step `index` already sent this route: the record names that step (a step that waits for its
 * kind — a scale, a pause, an analysis — sends its routes once, when it starts).
 */
export function routeSentBy(
  records: readonly ManagedRouteRecord[],
  route: PlannedRoute,
  index: number,
): boolean {
  return records.some(
    (r) =>
      r.name === route.route.name &&
      r.kind === route.kind &&
      r.step === index &&
      (r.removed === true) === (route.route.match === undefined),
  );
}

/** Reads status.managedRoutes, dropping entries that are not route records. */
export function readManagedRoutes(value: unknown): ManagedRouteRecord[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown): ManagedRouteRecord[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { name, kind, removed, step } = entry as Record<string, unknown>;
    if (typeof name !== 'string' || (kind !== 'setHeaderRoute' && kind !== 'setMirrorRoute')) return [];
    return [
      {
        name,
        kind,
        ...(removed === true ? { removed: true } : {}),
        ...(typeof step === 'number' && Number.isInteger(step) && step >= 0 ? { step } : {}),
      },
    ];
  });
}

/** The action of a route (a route without `match` removes it, as in Argo). */
export function routeStepAction(step: PlannedRoute): RouteAction {
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

/** The record after step `index` sent a route: set, or removed when the route has no match. */
export function recordRouteStep(
  records: readonly ManagedRouteRecord[],
  step: PlannedRoute,
  index: number,
): ManagedRouteRecord[] {
  const others = records.filter((r) => !(r.name === step.route.name && r.kind === step.kind));
  return [
    ...others,
    {
      name: step.route.name,
      kind: step.kind,
      ...(step.route.match === undefined ? { removed: true } : {}),
      step: index,
    },
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
 * The routes to send again while the router fails: each recorded route not removed, as the step that sent
 * it (its record's `step`, else the last step before `index` setting it) has it. A route step has already
 * completed then (as Argo), and a step waiting beside its route sent it when it started: this is the retry.
 */
export function resendRoutes(
  records: readonly ManagedRouteRecord[],
  steps: readonly PlannedStep[],
  index: number,
): RouteAction[] {
  const actions: RouteAction[] = [];
  const find = (record: ManagedRouteRecord, i: number): PlannedRoute | undefined => {
    const step = steps[i];
    if (step === undefined) return undefined;
    return routesOf(step).find((r) => r.kind === record.kind && r.route.name === record.name);
  };
  for (const record of records) {
    if (record.removed === true) continue;
    let route = record.step !== undefined && record.step <= index ? find(record, record.step) : undefined;
    for (let i = Math.min(index, steps.length) - 1; route === undefined && i >= 0; i--)
      route = find(record, i);
    if (route !== undefined) actions.push(routeStepAction(route));
  }
  return actions;
}
