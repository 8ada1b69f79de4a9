// The pure AnalysisRun planner: which metrics to measure now, each metric's phase, the run's phase, when to wake.
import type {
  AnalysisPhase,
  AnalysisRun,
  AnalysisRunStatus,
  Measurement,
  Metric,
  MetricResult,
  RunSummary,
} from '../manifest/analysis.ts';
import { isCompletedPhase, isWorsePhase } from './analysis-phase.ts';
import { isDryRunMetric, measurementRetentionLimit } from './measurement-retention.ts';
import { metricSettings, ERROR_RETRY_INTERVAL_MS, type MetricSettings } from './metric-settings.ts';

/** What the run should do now and what its status becomes. */
export interface AnalysisRunPlan {
  /** The next status (phases, summaries, terminated measurements); write it back to the run. */
  status: AnalysisRunStatus;
  /** Names of metrics due for a measurement now (including in-flight measurements due to be checked). */
  measure: string[];
  /** Metrics whose in-flight measurement was ended by termination: the provider should clean up (e.g. delete the Job). */
  terminate: string[];
  /** When the next measurement falls due, if the run is not finished and nothing is due now. */
  requeueAfterMs?: number;
}

const UNSUCCESSFUL: ReadonlySet<AnalysisPhase> = new Set(['Failed', 'Error', 'Inconclusive']);

interface Assessed {
  result: MetricResult;
  dryRun: boolean;
  settings?: MetricSettings;
  terminated: boolean;
}

function timeMs(iso: string | undefined, fallback: number): number {
  if (iso === undefined) return fallback;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? fallback : ms;
}

/**
 * A metric's phase from its counters, as Argo's assessMetricStatus: Failed past failureLimit,
 * Inconclusive past inconclusiveLimit, Error past consecutiveErrorLimit, Successful once
 * consecutiveSuccessLimit or count is reached (or when terminating), else Running / Pending.
 */
export function assessMetric(
  settings: MetricSettings,
  result: MetricResult,
  terminating: boolean,
): { phase: AnalysisPhase; message?: string } {
  if (isCompletedPhase(result.phase))
    return { phase: result.phase, ...(result.message && { message: result.message }) };
  const measurements = result.measurements ?? [];
  if (measurements.length === 0) return { phase: terminating ? 'Successful' : 'Pending' };
  const last = measurements.at(-1) as Measurement;
  if (last.finishedAt === undefined && !isCompletedPhase(last.phase)) return { phase: 'Running' };
  const name = result.name;
  const failed = result.failed ?? 0;
  const inconclusive = result.inconclusive ?? 0;
  const consecutiveError = result.consecutiveError ?? 0;
  if (settings.failureLimit !== undefined && failed > settings.failureLimit) {
    return {
      phase: 'Failed',
      message: `Metric "${name}" assessed Failed due to failed (${failed}) > failureLimit (${settings.failureLimit})`,
    };
  }
  if (settings.inconclusiveLimit !== undefined && inconclusive > settings.inconclusiveLimit) {
    return {
      phase: 'Inconclusive',
      message: `Metric "${name}" assessed Inconclusive due to inconclusive (${inconclusive}) > inconclusiveLimit (${settings.inconclusiveLimit})`,
    };
  }
  if (settings.consecutiveErrorLimit !== undefined && consecutiveError > settings.consecutiveErrorLimit) {
    const last = result.message ? `: ${result.message}` : '';
    return {
      phase: 'Error',
      message: `Metric "${name}" assessed Error due to consecutiveErrors (${consecutiveError}) > consecutiveErrorLimit (${settings.consecutiveErrorLimit})${last}`,
    };
  }
  const successLimit = settings.consecutiveSuccessLimit;
  if (successLimit !== undefined && (result.consecutiveSuccess ?? 0) >= successLimit)
    return { phase: 'Successful' };
  if (settings.count !== undefined && (result.count ?? 0) >= settings.count) {
    if (successLimit === undefined) return { phase: 'Successful' };
    // consecutiveSuccessLimit was asked for and not reached within count.
    const message = `Metric "${name}" reached count (${settings.count}) without ${successLimit} consecutive successes`;
    return settings.failureLimit !== undefined
      ? { phase: 'Inconclusive', message }
      : { phase: 'Failed', message };
  }
  return { phase: terminating ? 'Successful' : 'Running' };
}

function assessAll(run: AnalysisRun, now: Date, terminating: boolean): Assessed[] {
  const previous = new Map((run.status?.metricResults ?? []).map((r) => [r.name, r]));
  return run.spec.metrics.map((metric: Metric): Assessed => {
    const dryRun = isDryRunMetric(run, metric.name);
    const base: MetricResult = previous.get(metric.name) ?? { name: metric.name, phase: 'Pending' };
    let result: MetricResult = { ...base, ...(dryRun && { dryRun: true }) };
    let settings: MetricSettings;
    try {
      settings = metricSettings(metric);
    } catch (error) {
      return {
        result: { ...result, phase: 'Error', message: (error as Error).message },
        dryRun,
        terminated: false,
      };
    }
    let terminated = false;
    const last = result.measurements?.at(-1);
    if (
      terminating &&
      !isCompletedPhase(result.phase) &&
      last !== undefined &&
      last.finishedAt === undefined
    ) {
      // Argo ends an in-flight measurement on termination and counts it as Successful.
      const measurements = [...(result.measurements ?? [])];
      measurements[measurements.length - 1] = {
        ...last,
        phase: 'Successful',
        finishedAt: now.toISOString(),
        message: 'Metric terminated',
      };
      result = { ...result, measurements: measurements.slice(-measurementRetentionLimit(run, metric.name)) };
      terminated = true;
    }
    const { phase, message } = assessMetric(settings, result, terminating);
    result = { ...result, phase };
    if (message !== undefined) result.message = message;
    return { result, dryRun, settings, terminated };
  });
}

function summarize(assessed: Assessed[]): RunSummary {
  const summary = { count: assessed.length, successful: 0, failed: 0, inconclusive: 0, error: 0 };
  for (const { result } of assessed) {
    if (result.phase === 'Successful') summary.successful++;
    else if (result.phase === 'Failed') summary.failed++;
    else if (result.phase === 'Inconclusive') summary.inconclusive++;
    else if (result.phase === 'Error') summary.error++;
  }
  return summary;
}

function dueAt(assessed: Assessed, startedMs: number, nowMs: number): number | undefined {
  const { result, settings } = assessed;
  if (settings === undefined || isCompletedPhase(result.phase)) return undefined;
  const last = result.measurements?.at(-1);
  if (last === undefined) return startedMs + settings.initialDelayMs;
  if (last.finishedAt === undefined) return timeMs(last.resumeAt, nowMs);
  const finished = timeMs(last.finishedAt, nowMs);
  if (last.phase === 'Error') {
    const retry =
      finished + Math.min(settings.intervalMs ?? ERROR_RETRY_INTERVAL_MS, ERROR_RETRY_INTERVAL_MS);
    // A provider that answered 429 said when it may be asked again (the Error's resumeAt): not sooner.
    return last.resumeAt === undefined ? retry : Math.max(retry, timeMs(last.resumeAt, nowMs));
  }
  if (settings.intervalMs === undefined) return undefined;
  return finished + settings.intervalMs;
}

/**
 * Plans one reconcile of an AnalysisRun at `now` (pure). A finished run is returned unchanged.
 * The run terminates (remaining metrics end Successful, in-flight measurements are ended) when
 * `spec.terminate` is set or a non-dry-run metric ends Failed, Error or Inconclusive; its phase is then
 * the worst metric phase, so terminate yields Successful unless something already went wrong.
 * Dry-run metrics are measured and reported but never change the run's phase.
 */
export function planAnalysisRun(run: AnalysisRun, now: Date): AnalysisRunPlan {
  const status = run.status ?? {};
  if (isCompletedPhase(status.phase)) return { status, measure: [], terminate: [] };
  const nowMs = now.getTime();
  const startedAt = status.startedAt ?? now.toISOString();
  const startedMs = timeMs(startedAt, nowMs);

  const failedEarly = (list: Assessed[]): boolean =>
    list.some((a) => !a.dryRun && isCompletedPhase(a.result.phase) && UNSUCCESSFUL.has(a.result.phase));
  const wasTerminating =
    run.spec.terminate === true ||
    (status.metricResults ?? []).some(
      (r) => r.dryRun !== true && isDryRunMetric(run, r.name) === false && UNSUCCESSFUL.has(r.phase),
    );
  let assessed = assessAll(run, now, wasTerminating);
  const terminating = wasTerminating || failedEarly(assessed);
  if (terminating && !wasTerminating) assessed = assessAll(run, now, true);

  let worst: MetricResult | undefined;
  for (const a of assessed) {
    if (!a.dryRun && isWorsePhase(worst?.phase, a.result.phase)) worst = a.result;
  }
  const allCompleted = assessed.every((a) => isCompletedPhase(a.result.phase));
  const phase: AnalysisPhase = allCompleted ? (worst?.phase ?? 'Successful') : 'Running';

  const real = assessed.filter((a) => !a.dryRun);
  const dry = assessed.filter((a) => a.dryRun);
  const next: AnalysisRunStatus = {
    ...status,
    phase,
    startedAt,
    metricResults: assessed.map((a) => a.result),
    runSummary: summarize(real),
  };
  if (dry.length > 0) next.dryRunSummary = summarize(dry);
  else delete next.dryRunSummary;
  if (allCompleted && phase !== 'Successful' && worst?.message !== undefined) next.message = worst.message;
  else if (allCompleted && run.spec.terminate === true && phase === 'Successful')
    next.message = 'Run Terminated';
  else delete next.message;

  const terminate = assessed.filter((a) => a.terminated).map((a) => a.result.name);
  if (allCompleted) return { status: next, measure: [], terminate };

  const measure: string[] = [];
  let wake = Infinity;
  for (const a of assessed) {
    const due = dueAt(a, startedMs, nowMs);
    if (due === undefined) continue;
    if (due <= nowMs) measure.push(a.result.name);
    else wake = Math.min(wake, due - nowMs);
  }
  const plan: AnalysisRunPlan = { status: next, measure, terminate };
  if (measure.length === 0 && Number.isFinite(wake)) plan.requeueAfterMs = wake;
  return plan;
}
