// Reads what one planning pass needs from the Rollout: defaulted spec, parsed steps, budgets, names.
import { parseDuration } from '../spec/duration.ts';
import {
  TRAFFIC_ROUTING_PROVIDERS,
  canaryStepKind,
  withDefaults,
  type CanaryStep,
  type CanaryStrategyWithDefaults,
  type Rollout,
  type RolloutAnalysis,
  type RolloutAnalysisBackground,
  type RolloutSpecWithDefaults,
  type RolloutStatus,
  type SetCanaryScale,
} from '../spec/rollout.ts';
import { resolveReplicaBudget, type ReplicaBudget } from './canary-replica-counts.ts';
import { InvalidSpecError } from './invalid-spec-error.ts';
import type { ObservedState } from './observed-state.ts';

/** A canary step in the form the planner uses: one kind, durations in milliseconds. */
export type PlannedStep =
  | { kind: 'setWeight'; weight: number }
  | { kind: 'pause'; durationMs?: number }
  | { kind: 'setCanaryScale'; scale: SetCanaryScale }
  | { kind: 'analysis'; analysis: RolloutAnalysis };

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
  /** The live status (empty object when absent). */
  status: RolloutStatus;
}

function toPlannedStep(step: CanaryStep, index: number): PlannedStep {
  const kind = canaryStepKind(step);
  const field = `spec.strategy.canary.steps[${index}]`;
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
  throw new InvalidSpecError(`step kind ${kind ?? '(none)'} is not supported yet`, field);
}

/**
 * Builds the pass context.
 *
 * @throws InvalidSpecError when the rollout cannot be planned (no canary strategy, unsupported step,
 * bad duration or percentage, traffic routing other than replica ratio).
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
  const routing = canary.trafficRouting as Record<string, unknown> | undefined;
  const trafficRouted =
    routing !== undefined && TRAFFIC_ROUTING_PROVIDERS.some((provider) => routing[provider] !== undefined);
  if (trafficRouted) {
    throw new InvalidSpecError(
      'traffic routers are not supported yet (replica ratio only)',
      'spec.strategy.canary.trafficRouting',
    );
  }
  const replicas = spec.replicas;
  if (!Number.isInteger(replicas) || replicas < 0)
    throw new InvalidSpecError('must be a non-negative integer', 'spec.replicas');
  const steps = canary.steps.map((step, index) => toPlannedStep(step, index));
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
    trafficRouted,
    status: rollout.status ?? {},
  };
}
