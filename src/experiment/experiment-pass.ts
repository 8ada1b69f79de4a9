// One planning pass over an Experiment as data, and the sub-step contract (the shape canary and blue-green use).
import type { Experiment, ExperimentAnalysisRunStatus, TemplateStatus } from '../manifest/experiment.ts';
import type { ExperimentAction, ExperimentEventAction } from './experiment-action.ts';
import type { ObservedExperiment } from './observed-experiment.ts';

/** What every sub-step reads: the Experiment, what was observed, and `now` (never the clock). */
export interface ExperimentContext {
  readonly experiment: Experiment;
  readonly observed: ObservedExperiment;
  readonly now: Date;
  /**
   * True when the Experiment was already ending as the live status records it (Argo's "terminating"):
   * spec.terminate, a completed phase, a Failed/Error template, a Failed/Error/Inconclusive analysis, or
   * every required analysis Successful. No ReplicaSet or run is started then, and every one is stopped.
   */
  readonly terminating: boolean;
}

/** The next status the sub-steps build, field by field. */
export interface ExperimentPassStatus {
  templateStatuses: TemplateStatus[];
  analysisRuns: ExperimentAnalysisRunStatus[];
}

/** How a pass ends: the Experiment's phase and message, and its availability time. */
export interface ExperimentVerdict {
  phase: NonNullable<NonNullable<Experiment['status']>['phase']>;
  message?: string | undefined;
  availableAt?: string | undefined;
}

export interface ExperimentPass {
  readonly context: ExperimentContext;
  readonly status: ExperimentPassStatus;
  readonly actions: readonly ExperimentAction[];
  readonly events: readonly ExperimentEventAction[];
  /** Moments a timer can change the plan (ms since the epoch). */
  readonly wakeAtMs: readonly number[];
  readonly verdict?: ExperimentVerdict;
}

export interface ExperimentPassChange {
  status?: Partial<ExperimentPassStatus>;
  actions?: readonly ExperimentAction[];
  events?: readonly ExperimentEventAction[];
  wakeAtMs?: ReadonlyArray<number | undefined>;
  verdict?: ExperimentVerdict;
}

/** A new pass with `change` applied: status fields replace, lists append, `verdict` ends the pass. */
export function amendExperimentPass(pass: ExperimentPass, change: ExperimentPassChange): ExperimentPass {
  return {
    ...pass,
    status: change.status ? { ...pass.status, ...change.status } : pass.status,
    actions: [...pass.actions, ...(change.actions ?? [])],
    events: [...pass.events, ...(change.events ?? [])],
    wakeAtMs: [...pass.wakeAtMs, ...(change.wakeAtMs ?? []).filter((at): at is number => at !== undefined)],
    ...(change.verdict !== undefined ? { verdict: change.verdict } : {}),
  };
}

/** One sub-step of an Experiment pass: reads the pass only, returns the next one. */
export interface ExperimentSubStep {
  readonly name: string;
  readonly run: (pass: ExperimentPass) => ExperimentPass;
}

/**
 * Runs `table` in order until a sub-step ends the pass.
 * @throws Error when none did (a table bug).
 */
export function runExperimentSubSteps(
  table: readonly ExperimentSubStep[],
  first: ExperimentPass,
): ExperimentPass & { verdict: ExperimentVerdict } {
  let pass = first;
  for (const step of table) {
    pass = step.run(pass);
    if (pass.verdict !== undefined) return pass as ExperimentPass & { verdict: ExperimentVerdict };
  }
  throw new Error(`no sub-step of [${table.map((step) => step.name).join(', ')}] ended the pass`);
}
