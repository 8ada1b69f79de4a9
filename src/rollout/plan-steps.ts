// Sub-planner: where the canary is in its steps — weights, canary scale, pause steps and their timers.
import type { PauseCondition } from '../manifest/rollout.ts';
import type { PlannedStep } from './rollout-context.ts';

/** Pause reason of a pause step (Argo's name). */
export const CANARY_PAUSE_STEP = 'CanaryPauseStep';
/** Pause reason of an inconclusive AnalysisRun (step or background). */
export const INCONCLUSIVE_ANALYSIS_RUN = 'InconclusiveAnalysisRun';
/** Pause reason of an inconclusive experiment step's Experiment (Argo's name). */
export const INCONCLUSIVE_EXPERIMENT = 'InconclusiveExperiment';

/** The canary weight at step `index`: the last setWeight at or before it; 100 past the last step. */
export function canaryWeightAt(steps: readonly PlannedStep[], index: number): number {
  if (index >= steps.length) return 100;
  for (let i = Math.min(index, steps.length - 1); i >= 0; i--) {
    const step = steps[i];
    if (step?.kind === 'setWeight') return step.weight;
  }
  return 0;
}

/** The setCanaryScale in force at step `index` (none past the last step, or after matchTrafficWeight). */
export function canaryScaleAt(
  steps: readonly PlannedStep[],
  index: number,
): { replicas?: number; weight?: number } | undefined {
  if (index >= steps.length) return undefined;
  for (let i = Math.min(index, steps.length - 1); i >= 0; i--) {
    const step = steps[i];
    if (step?.kind === 'setCanaryScale') {
      if (step.scale.matchTrafficWeight === true) return undefined;
      if (step.scale.replicas !== undefined) return { replicas: step.scale.replicas };
      if (step.scale.weight !== undefined) return { weight: step.scale.weight };
      return undefined;
    }
  }
  return undefined;
}

/** A short description of a step for events and messages: its kind, then the routes beside it. */
export function describeStep(step: PlannedStep): string {
  const beside = (step.routes ?? []).map((route) => ` + ${describeKind(route)}`).join('');
  return `${describeKind(step)}${beside}`;
}

function describeKind(step: PlannedStep): string {
  switch (step.kind) {
    case 'setWeight':
      return `setWeight ${step.weight}`;
    case 'pause':
      return step.durationMs === undefined ? 'pause' : `pause ${step.durationMs / 1000}s`;
    case 'setCanaryScale':
      return `setCanaryScale ${JSON.stringify(step.scale)}`;
    case 'analysis':
      return `analysis ${(step.analysis.templates ?? []).map((t) => t.templateName).join(',')}`;
    case 'setHeaderRoute':
    case 'setMirrorRoute':
      return `${step.kind} ${step.route.name}${step.route.match === undefined ? ' (remove)' : ''}`;
    case 'experiment':
      return `experiment ${step.experiment.templates.map((t) => `${t.name}=${t.specRef}`).join(',')}`;
  }
}

export interface PauseStepInput {
  durationMs?: number;
  pauseConditions: readonly PauseCondition[];
  controllerPause: boolean;
  now: Date;
}

export type PauseStepResult =
  | { done: true }
  | {
      done: false;
      pauseConditions: PauseCondition[];
      controllerPause: true;
      wakeAtMs?: number;
      started: boolean;
    };

/**
 * A pause step. It starts by adding pause condition CanaryPauseStep (startTime = now) and controllerPause.
 * It is done when its duration has passed since startTime, or when a promote removed the condition
 * (controllerPause still set and the condition gone, as Argo's `promote` leaves it).
 */
export function planPauseStep(input: PauseStepInput): PauseStepResult {
  const condition = input.pauseConditions.find((c) => c.reason === CANARY_PAUSE_STEP);
  if (condition === undefined) {
    if (input.controllerPause) return { done: true };
    const started = [
      ...input.pauseConditions,
      { reason: CANARY_PAUSE_STEP, startTime: input.now.toISOString() },
    ];
    return {
      done: false,
      pauseConditions: started,
      controllerPause: true,
      started: true,
      ...(input.durationMs !== undefined ? { wakeAtMs: input.now.getTime() + input.durationMs } : {}),
    };
  }
  if (input.durationMs !== undefined) {
    const start = Date.parse(condition.startTime);
    // An unreadable startTime is repaired to now, so the timer still ends.
    const conditions = Number.isNaN(start)
      ? input.pauseConditions.map((c) => (c === condition ? { ...c, startTime: input.now.toISOString() } : c))
      : [...input.pauseConditions];
    const end = (Number.isNaN(start) ? input.now.getTime() : start) + input.durationMs;
    if (input.now.getTime() >= end) return { done: true };
    return { done: false, pauseConditions: conditions, controllerPause: true, wakeAtMs: end, started: false };
  }
  return { done: false, pauseConditions: [...input.pauseConditions], controllerPause: true, started: false };
}
