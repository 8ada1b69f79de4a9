// The Experiment's lifecycle rules as Argo defines them: when it is ending, how long it runs, what each template runs.
import type { AnalysisPhase } from '../manifest/analysis.ts';
import { parseDuration } from '../manifest/duration.ts';
import {
  EXPERIMENT_DEFAULTS,
  type Experiment,
  type ExperimentStatus,
  type ExperimentTemplate,
  type TemplateStatusCode,
} from '../manifest/experiment.ts';

/** The completed analysis phases: an Experiment in one of them has ended. */
const COMPLETED_PHASES: ReadonlySet<string> = new Set(['Successful', 'Failed', 'Error', 'Inconclusive']);

export function isCompletedPhase(phase: string | undefined): boolean {
  return phase !== undefined && COMPLETED_PHASES.has(phase);
}

/** A template that reached one of these keeps it (and runs no pods). */
export function isCompletedTemplateStatus(status: TemplateStatusCode | undefined): boolean {
  return status === 'Successful' || status === 'Failed' || status === 'Error';
}

/** Template statuses from best to worst: the Experiment reports its worst template. */
const TEMPLATE_ORDER: readonly TemplateStatusCode[] = [
  'Successful',
  'Running',
  'Progressing',
  'Error',
  'Failed',
];
/** Analysis phases from best to worst: the Experiment reports its worst analysis. */
const ANALYSIS_ORDER: readonly AnalysisPhase[] = [
  'Successful',
  'Running',
  'Pending',
  'Inconclusive',
  'Error',
  'Failed',
];

/** True when `next` is worse than `current` (an unknown one counts as the best). */
export function templateIsWorse(current: TemplateStatusCode, next: TemplateStatusCode | undefined): boolean {
  return TEMPLATE_ORDER.indexOf(next ?? 'Successful') > TEMPLATE_ORDER.indexOf(current);
}

export function analysisIsWorse(current: AnalysisPhase, next: AnalysisPhase | '' | undefined): boolean {
  const index = next === undefined || next === '' ? 0 : ANALYSIS_ORDER.indexOf(next);
  return index > ANALYSIS_ORDER.indexOf(current);
}

/** True when the Experiment has analyses marked requiredForCompletion. */
export function hasRequiredAnalyses(experiment: Experiment): boolean {
  return (experiment.spec.analyses ?? []).some((analysis) => analysis.requiredForCompletion === true);
}

/** True when it has required analyses and every one of them is Successful in `status`. */
export function requiredAnalysesSuccessful(
  experiment: Experiment,
  status: ExperimentStatus | undefined,
): boolean {
  const required = (experiment.spec.analyses ?? []).filter(
    (analysis) => analysis.requiredForCompletion === true,
  );
  if (required.length === 0) return false;
  return required.every(
    (analysis) => status?.analysisRuns?.find((run) => run.name === analysis.name)?.phase === 'Successful',
  );
}

/**
 * True when the Experiment is ending as `status` records it: spec.terminate, a completed phase, a Failed or
 * Error template, a Failed, Error or Inconclusive analysis, or every required analysis Successful.
 */
export function isTerminating(experiment: Experiment, status: ExperimentStatus | undefined): boolean {
  if (experiment.spec.terminate === true || isCompletedPhase(status?.phase)) return true;
  if ((status?.templateStatuses ?? []).some((t) => t.status === 'Failed' || t.status === 'Error'))
    return true;
  if (
    (status?.analysisRuns ?? []).some(
      (r) => r.phase === 'Failed' || r.phase === 'Error' || r.phase === 'Inconclusive',
    )
  )
    return true;
  return requiredAnalysesSuccessful(experiment, status);
}

/** When the duration ends (ms since the epoch): availableAt + spec.duration; undefined without both. */
export function durationEndMs(experiment: Experiment, availableAt: string | undefined): number | undefined {
  if (experiment.spec.duration === undefined || availableAt === undefined) return undefined;
  const start = Date.parse(availableAt);
  if (Number.isNaN(start)) return undefined;
  try {
    return start + parseDuration(experiment.spec.duration);
  } catch {
    // Refused by validation; a stored one that does not parse never ends the Experiment by time.
    return undefined;
  }
}

/** True once the Experiment has run for its whole duration since it became available. */
export function passedDuration(experiment: Experiment, availableAt: string | undefined, now: Date): boolean {
  const end = durationEndMs(experiment, availableAt);
  return end !== undefined && now.getTime() > end;
}

/** The replicas a template should run now: 0 once the Experiment or the template has ended. */
export function desiredReplicas(
  template: ExperimentTemplate,
  terminating: boolean,
  templateStatus: TemplateStatusCode | undefined,
): number {
  if (terminating || isCompletedTemplateStatus(templateStatus)) return 0;
  return template.replicas ?? EXPERIMENT_DEFAULTS.replicas;
}

export function progressDeadlineSecondsOf(experiment: Experiment): number {
  return experiment.spec.progressDeadlineSeconds ?? EXPERIMENT_DEFAULTS.progressDeadlineSeconds;
}

export function scaleDownDelaySecondsOf(experiment: Experiment): number {
  return experiment.spec.scaleDownDelaySeconds ?? EXPERIMENT_DEFAULTS.scaleDownDelaySeconds;
}
