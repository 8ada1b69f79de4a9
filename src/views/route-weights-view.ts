// The weights each route object of a rollout holds, read back, beside the weights Rollgate asked for: drift shows.
import type { Rollout } from '../manifest/rollout.ts';
import type { RouteWriter } from '../reconciler/route-writer.ts';
import { routedCanaryWeight, type RolloutRouteTargets } from '../reconciler/traffic-router-of-routes.ts';
import type { RouteTarget, RouteWeightsRead } from '../reconciler/traffic-router.ts';

/** A canary/stable pair of weights on the rollout's scale (maxTrafficWeight). */
export interface WeightPair {
  canary: number;
  stable: number;
}

/** One route of one route object, as read. */
export interface RouteWeightView {
  /** `VirtualService shop/web-vs`. */
  object: string;
  /** Which route of the object (`route primary`, `rule 0`); absent for the whole object (a TrafficSplit). */
  route?: string;
  /** Absent when the route has no backend for that Service or subset. */
  canary?: number;
  stable?: number;
  /** Rollgate's weights, present only when the route holds others (edited since Rollgate wrote it). */
  drift?: WeightPair;
  /** Why the object could not be read or understood; nothing else is then known of it. */
  error?: string;
}

/** The routes of a routed rollout as read back. */
export interface RoutesView {
  /** maxTrafficWeight: the scale of every weight here. */
  total: number;
  /** What Rollgate wants each route to hold (from status.canary.weights); absent before it set any. */
  wanted?: WeightPair;
  routes: RouteWeightView[];
  /** The routing block cannot be followed (the same message the rollout's status carries). */
  error?: string;
}

/** status.canary.weights as recorded. */
export interface RecordedWeights {
  canary: { weight: number; podTemplateHash?: string | undefined };
  stable: { weight: number; podTemplateHash?: string | undefined };
  /** A weighted experiment step's templates: their share is not the stable's. */
  additional?: ReadonlyArray<{ weight: number }> | undefined;
}

/**
 * What a route holds when Rollgate's weights are in force: as the router writes them (no canary:
 * everything to stable; the experiment templates' share out of the stable's), so a rollout at rest never
 * shows drift.
 */
export function wantedWeights(recorded: RecordedWeights, total: number): WeightPair {
  const hasCanary = recorded.canary.podTemplateHash !== recorded.stable.podTemplateHash;
  const canary = routedCanaryWeight(recorded.canary.weight, hasCanary, total);
  const others = (recorded.additional ?? []).reduce((sum, destination) => sum + destination.weight, 0);
  return { canary, stable: Math.max(0, total - canary - others) };
}

/** The views of one object's routes as read: a drift where a route holds other weights than `wanted`. */
export function routeWeightViews(
  object: string,
  read: RouteWeightsRead[],
  wanted: WeightPair | undefined,
): RouteWeightView[] {
  return read.map((entry) => {
    const view: RouteWeightView = { object };
    if (entry.route !== '') view.route = entry.route;
    if (entry.canary !== undefined) view.canary = entry.canary;
    if (entry.stable !== undefined) view.stable = entry.stable;
    if (wanted !== undefined && (entry.canary !== wanted.canary || entry.stable !== wanted.stable))
      view.drift = wanted;
    return view;
  });
}

function objectOf(target: RouteTarget): string {
  return `${target.resource.kind} ${target.namespace}/${target.name}`;
}

async function readTarget(
  reader: Pick<RouteWriter, 'readLive' | 'resolve'>,
  named: RouteTarget,
  routes: RolloutRouteTargets,
  wanted: WeightPair | undefined,
): Promise<RouteWeightView[]> {
  let target: RouteTarget;
  try {
    target = await reader.resolve(named);
  } catch (err) {
    // Named by another object that cannot be read or names none: that object is what is shown.
    const shownAs = named.derivedFrom ?? named;
    return [
      {
        object: `${shownAs.resource.kind} ${shownAs.namespace}/${shownAs.name}`,
        error: err instanceof Error ? err.message : String(err),
      },
    ];
  }
  const object = objectOf(target);
  if (target.readWeights === undefined)
    return [{ object, error: 'this router cannot read weights back yet' }];
  let live: Record<string, unknown> | undefined;
  try {
    live = await reader.readLive(target);
  } catch (err) {
    return [{ object, error: err instanceof Error ? err.message : String(err) }];
  }
  if (live === undefined) return [{ object, error: 'not found' }];
  const read = target.readWeights(live, routes);
  if (read instanceof Error) return [{ object, error: read.message }];
  return routeWeightViews(object, read, wanted);
}

/**
 * Reads every route object of the rollout (all at once: `rollgate status` must answer fast) and
 * compares each route's weights with the recorded ones. Reads only; an object that cannot be read is
 * reported with the reason, never thrown.
 */
export async function readRoutesView(
  reader: Pick<RouteWriter, 'readLive' | 'resolve'>,
  routes: RolloutRouteTargets,
  recorded: RecordedWeights | undefined,
): Promise<RoutesView> {
  const wanted = recorded === undefined ? undefined : wantedWeights(recorded, routes.total);
  const read = await Promise.all(routes.targets.map((target) => readTarget(reader, target, routes, wanted)));
  return { total: routes.total, ...(wanted !== undefined ? { wanted } : {}), routes: read.flat() };
}

/** A weight as shown: a percentage on the usual scale of 100, else `n/total`. */
function shown(weight: number | undefined, total: number): string {
  if (weight === undefined) return '(no backend)';
  return total === 100 ? `${weight}%` : `${weight}/${total}`;
}

/** The routes as text lines (`rollgate status`), one per route, drift spelled out. */
export function formatRoutesView(view: RoutesView): string[] {
  const lines = ['Routes:     (weights read back from the route objects)'];
  if (view.error !== undefined) lines.push(`  ${view.error}`);
  for (const route of view.routes) {
    const name = `${route.object}${route.route !== undefined ? ` ${route.route}` : ''}`;
    if (route.error !== undefined) {
      lines.push(`  ${name}: ${route.error}`);
      continue;
    }
    const drift =
      route.drift === undefined
        ? ''
        : route.stable === view.total - (route.canary ?? 0) &&
            route.drift.stable === view.total - route.drift.canary
          ? ` (drift: Rollgate wants ${shown(route.drift.canary, view.total)})`
          : ` (drift: Rollgate wants canary ${shown(route.drift.canary, view.total)} / stable ${shown(route.drift.stable, view.total)})`;
    lines.push(
      `  ${name}: canary ${shown(route.canary, view.total)} / stable ${shown(route.stable, view.total)}${drift}`,
    );
  }
  return lines;
}

/** How the view finds a rollout's route objects and reads them. */
export interface RouteReading {
  reader: Pick<RouteWriter, 'readLive' | 'resolve'>;
  /** The rollout's route objects: the provider table, wired by the caller (src/reconciler and src/views do not import src/traffic). */
  targetsOf(rollout: Rollout): RolloutRouteTargets | Error | undefined;
}

/** The routes view of a rollout; undefined when it routes by replica ratio. */
export async function readRolloutRoutes(
  routing: RouteReading,
  rollout: Rollout,
): Promise<RoutesView | undefined> {
  const routes = routing.targetsOf(rollout);
  if (routes === undefined) return undefined;
  if (routes instanceof Error)
    return {
      total: rollout.spec.strategy.canary?.trafficRouting?.maxTrafficWeight ?? 100,
      routes: [],
      error: routes.message,
    };
  return readRoutesView(routing.reader, routes, rollout.status?.canary?.weights);
}
