// Reads what one planning pass needs from the Rollout: defaulted spec, parsed steps, budgets, names.
import { parseDuration } from '../manifest/duration.ts';
import {
  TRAFFIC_ROUTING_PROVIDERS,
  canaryStepKind,
  withDefaults,
  type CanaryStep,
  type CanaryStrategyWithDefaults,
  type Rollout,
  type RolloutAnalysis,
  type RolloutAnalysisBackground,
  type RolloutExperimentStep,
  type RolloutSpecWithDefaults,
  type RolloutStatus,
  type SetCanaryScale,
  type SetHeaderRoute,
  type SetMirrorRoute,
} from '../manifest/rollout.ts';
import {
  routersWithoutExperimentWeights,
  unsupportedTrafficRouters,
} from '../manifest/unsupported-fields.ts';
import { resolveReplicaBudget, type ReplicaBudget } from './canary-replica-counts.ts';
import { InvalidSpecError } from './invalid-spec-error.ts';
import type { ObservedState } from './observed-state.ts';

/** A header or mirror route a step sets (or removes, without `match`). */
export type PlannedRoute =
  { kind: 'setHeaderRoute'; route: SetHeaderRoute } | { kind: 'setMirrorRoute'; route: SetMirrorRoute };

/**
 * A canary step in the form the planner uses: its main kind (the one that decides when the step is done),
 * durations in milliseconds. `routes` are the header and mirror routes set in the same step beside it
 * (Argo allows a route beside any kind): sent first, the step done once they are and its kind is.
 */
export type PlannedStep = (
  | { kind: 'setWeight'; weight: number }
  | { kind: 'pause'; durationMs?: number }
  | { kind: 'setCanaryScale'; scale: SetCanaryScale }
  | { kind: 'analysis'; analysis: RolloutAnalysis }
  | { kind: 'experiment'; experiment: RolloutExperimentStep }
  | PlannedRoute
) & { routes?: readonly PlannedRoute[] };

/** Argo's default of trafficRouting.maxTrafficWeight: the weight that means "all traffic". */
export const DEFAULT_MAX_TRAFFIC_WEIGHT = 100;

/** The traffic router of a rollout, as far as the planner needs it (the router itself lives in src/traffic). */
export interface PlannedRouter {
  /** The weight that means "all traffic" (trafficRouting.maxTrafficWeight, default 100). */
  maxTrafficWeight: number;
}

/** Everything a sub-planner may read for one pass. */
export interface RolloutContext {
  rollout: Rollout;
  name: string;
  now: Date;
  observed: ObservedState;
  spec: RolloutSpecWithDefaults;
  canary: CanaryStrategyWithDefaults;
  steps: PlannedStep[];
  replicas: number;
  budget: ReplicaBudget;
  background?: RolloutAnalysisBackground;
  /** A traffic router splits the traffic (not the replica ratio): changes the defaults of the scale-down delays. */
  trafficRouted: boolean;
  /** The traffic router, or undefined when the replica ratio splits the traffic. */
  router: PlannedRouter | undefined;
  /** The live status (empty object when absent). */
  status: RolloutStatus;
}

/** What the steps need to know of the routing: whether a router is set, and those set that cannot weight experiments. */
interface StepRouting {
  routed: boolean;
  unweighted: readonly string[];
}

function toPlannedStep(step: CanaryStep, index: number, routing: StepRouting): PlannedStep {
  const { routed } = routing;
  const kind = canaryStepKind(step);
  const field = `spec.strategy.canary.steps[${index}]`;
  const routes: PlannedRoute[] = [];
  for (const route of ['setHeaderRoute', 'setMirrorRoute'] as const) {
    if (step[route] === undefined) continue;
    if (!routed) throw new InvalidSpecError(`${route} needs a traffic router`, `${field}.${route}`);
    if (route === 'setHeaderRoute' && step.setHeaderRoute !== undefined)
      routes.push({ kind: route, route: step.setHeaderRoute });
    if (route === 'setMirrorRoute' && step.setMirrorRoute !== undefined)
      routes.push({ kind: route, route: step.setMirrorRoute });
  }
  const main = toMainStep(step, kind, field, routing);
  // A step of routes only is its first route, the others beside it.
  const [first, ...others] = routes;
  if (main === undefined && first !== undefined)
    return others.length > 0 ? { ...first, routes: others } : first;
  if (main === undefined)
    throw new InvalidSpecError(`step kind ${kind ?? '(none)'} is not supported yet`, field);
  return routes.length > 0 ? { ...main, routes } : main;
}

/** The step's kind other than its routes, or undefined for a step of routes only. */
function toMainStep(
  step: CanaryStep,
  kind: ReturnType<typeof canaryStepKind>,
  field: string,
  routing: StepRouting,
): Exclude<PlannedStep, PlannedRoute> | undefined {
  if (kind === 'setHeaderRoute' || kind === 'setMirrorRoute') return undefined;
  if (kind === 'setWeight' && step.setWeight !== undefined) return { kind, weight: step.setWeight };
  if (kind === 'pause' && step.pause !== undefined) {
    if (step.pause.duration === undefined) return { kind };
    try {
      return { kind, durationMs: parseDuration(step.pause.duration) };
    } catch (error) {
      throw new InvalidSpecError((error as Error).message, `${field}.pause.duration`);
    }
  }
  if (kind === 'setCanaryScale' && step.setCanaryScale !== undefined)
    return { kind, scale: step.setCanaryScale };
  if (kind === 'analysis' && step.analysis !== undefined) {
    if ((step.analysis.templates ?? []).length === 0) {
      throw new InvalidSpecError(
        'an analysis step needs at least one template',
        `${field}.analysis.templates`,
      );
    }
    return { kind, analysis: step.analysis };
  }
  if (kind === 'experiment' && step.experiment !== undefined) {
    if (step.experiment.templates.length === 0)
      throw new InvalidSpecError(
        'an experiment step needs at least one template',
        `${field}.experiment.templates`,
      );
    const weighted = step.experiment.templates.findIndex((template) => template.weight !== undefined);
    // A template's weight is a share of what the router sends: a router that has extra destinations is needed.
    if (weighted >= 0 && !routing.routed)
      throw new InvalidSpecError(
        'requires strategy.canary.trafficRouting',
        `${field}.experiment.templates[${weighted}].weight`,
      );
    if (weighted >= 0 && routing.unweighted.length > 0)
      throw new InvalidSpecError(
        `unsupported: with ${routing.unweighted.join(', ')} (only the Istio, SMI and ALB routers send traffic to experiment templates, as in Argo)`,
        `${field}.experiment.templates[${weighted}].weight`,
      );
    return { kind, experiment: step.experiment };
  }
  throw new InvalidSpecError(`step kind ${kind ?? '(none)'} is not supported yet`, field);
}

/**
 * The context with status.canary.weights unknown: used with a router when a new revision starts, so the
 * first weights it needs are sent rather than trusted from a status that may lag the router.
 */
export function withWeightsUnknown(context: RolloutContext): RolloutContext {
  const canary = context.status.canary;
  if (canary?.weights === undefined) return context;
  const { weights: _unknown, ...rest } = canary;
  return { ...context, status: { ...context.status, canary: rest } };
}

/** The weight that means "all traffic": the router's maxTrafficWeight, 100 without a router. */
export function fullWeightOf(context: Pick<RolloutContext, 'router'>): number {
  return context.router?.maxTrafficWeight ?? DEFAULT_MAX_TRAFFIC_WEIGHT;
}

/**
 * The router the planner drives, from trafficRouting: undefined when no provider is configured.
 *
 * @throws InvalidSpecError when a configured provider has no router (the list `rollgate validate` uses,
 * src/manifest/unsupported-fields.ts): it is refused, never silently split by replica ratio instead.
 */
function readRouter(routing: Record<string, unknown> | undefined): PlannedRouter | undefined {
  if (routing === undefined) return undefined;
  if (!TRAFFIC_ROUTING_PROVIDERS.some((provider) => routing[provider] !== undefined)) return undefined;
  const unsupported = unsupportedTrafficRouters(routing);
  if (unsupported.length > 0) {
    throw new InvalidSpecError(
      `no traffic router for ${unsupported.join(', ')} yet`,
      'spec.strategy.canary.trafficRouting',
    );
  }
  const max = routing['maxTrafficWeight'];
  return { maxTrafficWeight: typeof max === 'number' && max >= 1 ? max : DEFAULT_MAX_TRAFFIC_WEIGHT };
}

/**
 * Builds the pass context.
 *
 * @throws InvalidSpecError when the rollout cannot be planned (no canary strategy, unsupported step,
 * bad duration or percentage, a trafficRouting provider without a router).
 */
export function readRolloutContext(rollout: Rollout, observed: ObservedState, now: Date): RolloutContext {
  const spec = withDefaults(rollout.spec);
  const canary = spec.strategy.canary;
  if (canary === undefined) {
    throw new InvalidSpecError(
      rollout.spec.strategy.blueGreen !== undefined
        ? 'the blueGreen strategy is not supported yet'
        : 'a canary strategy is required',
      'spec.strategy.canary',
    );
  }
  const router = readRouter(canary.trafficRouting as Record<string, unknown> | undefined);
  // Ping-pong swaps which Service the router weights as stable; only the ALB router, alone, does that here.
  const routers = TRAFFIC_ROUTING_PROVIDERS.filter(
    (provider) => (canary.trafficRouting as Record<string, unknown> | undefined)?.[provider] !== undefined,
  );
  if (canary.pingPong !== undefined && (routers.length !== 1 || routers[0] !== 'alb'))
    throw new InvalidSpecError(
      'ping-pong Services need the ALB router, alone',
      'spec.strategy.canary.pingPong',
    );
  const replicas = spec.replicas;
  if (!Number.isInteger(replicas) || replicas < 0)
    throw new InvalidSpecError('must be a non-negative integer', 'spec.replicas');
  const stepRouting: StepRouting = {
    routed: router !== undefined,
    unweighted:
      canary.trafficRouting === undefined ? [] : routersWithoutExperimentWeights(canary.trafficRouting),
  };
  const steps = canary.steps.map((step, index) => toPlannedStep(step, index, stepRouting));
  const budget = resolveReplicaBudget(replicas, canary.maxSurge, canary.maxUnavailable);
  const background =
    canary.analysis !== undefined && (canary.analysis.templates ?? []).length > 0
      ? canary.analysis
      : undefined;
  return {
    rollout,
    name: rollout.metadata.name,
    now,
    observed,
    spec,
    canary,
    steps,
    replicas,
    budget,
    background,
    trafficRouted: router !== undefined,
    router,
    status: rollout.status ?? {},
  };
}
