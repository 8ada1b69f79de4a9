// A read-only view of a rollout's AnalysisRuns for `rollgate status`: each run's metrics and their last measurements.
import { ANALYSIS_TYPE_LABEL, STEP_INDEX_LABEL } from '../rollout/rollout-action.ts';
import { analysisRunStatusSchema, type Measurement, type MetricResult } from '../manifest/analysis.ts';
import { measuredNumber } from './measured-number.ts';
import {
  VIEW_MEASUREMENTS,
  type AnalysisMetricView,
  type AnalysisRunView,
  type MeasurementView,
} from './analysis-run-view-text.ts';

// Where their importers have always found them; the CLI's views import the text module and the listing
// (read-analysis-runs.ts) alone, and the listing loads this one (with zod and the AnalysisRun schema)
// only for a rollout's runs.
export {
  formatAnalysisRunViews,
  VIEW_MEASUREMENTS,
  type AnalysisMetricView,
  type AnalysisRunView,
  type MeasurementView,
} from './analysis-run-view-text.ts';

interface RunObject {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string }>;
    creationTimestamp?: string;
  };
  spec?: {
    terminate?: boolean;
    metrics?: Array<{ name?: string; successCondition?: unknown; failureCondition?: unknown }>;
  };
  status?: unknown;
}

function measurementView(m: Measurement): MeasurementView {
  const number = measuredNumber(m.value);
  return {
    phase: m.phase,
    ...(m.value !== undefined && { value: m.value }),
    ...(number !== undefined && { number }),
    ...(m.message !== undefined && { message: m.message }),
    ...(m.startedAt !== undefined && { startedAt: m.startedAt }),
    ...(m.finishedAt !== undefined && { finishedAt: m.finishedAt }),
  };
}

function metricView(result: MetricResult, keep: number): AnalysisMetricView {
  return {
    name: result.name,
    phase: result.phase,
    count: result.count ?? 0,
    successful: result.successful ?? 0,
    failed: result.failed ?? 0,
    inconclusive: result.inconclusive ?? 0,
    error: result.error ?? 0,
    ...(result.dryRun === true && { dryRun: true }),
    ...(result.message !== undefined && { message: result.message }),
    lastMeasurements: (result.measurements ?? []).slice(-keep).map(measurementView),
  };
}

/**
 * The view of one AnalysisRun object as read from the cluster (plain JSON). Metrics without a result
 * yet are shown Pending with no measurements; a status that does not parse shows the run's phase as
 * `Unknown` rather than failing the whole status command.
 */
export function buildAnalysisRunView(object: unknown, keep = VIEW_MEASUREMENTS): AnalysisRunView {
  const run = (typeof object === 'object' && object !== null ? object : {}) as RunObject;
  const parsed = analysisRunStatusSchema.safeParse(run.status ?? {});
  const status = parsed.success ? parsed.data : undefined;
  const results = status?.metricResults ?? [];
  const metricNames = (run.spec?.metrics ?? []).map((m) => m.name ?? '').filter((n) => n !== '');
  const metrics = metricNames.map((name) => {
    const result = results.find((r) => r.name === name);
    return result ? metricView(result, keep) : metricView({ name, phase: 'Pending' }, keep);
  });
  for (const result of results)
    if (!metricNames.includes(result.name)) metrics.push(metricView(result, keep));
  for (const metric of metrics) {
    const spec = run.spec?.metrics?.find((m) => m.name === metric.name);
    if (typeof spec?.successCondition === 'string') metric.successCondition = spec.successCondition;
    if (typeof spec?.failureCondition === 'string') metric.failureCondition = spec.failureCondition;
  }
  const labels = run.metadata?.labels ?? {};
  const step = Number(labels[STEP_INDEX_LABEL]);
  return {
    name: run.metadata?.name ?? '',
    phase: parsed.success ? (status?.phase ?? 'Pending') : 'Unknown',
    ...(status?.message !== undefined && { message: status.message }),
    terminated: run.spec?.terminate === true,
    ...(labels[ANALYSIS_TYPE_LABEL] !== undefined && { type: labels[ANALYSIS_TYPE_LABEL] }),
    ...(Number.isInteger(step) && labels[STEP_INDEX_LABEL] !== undefined && { step }),
    metrics,
  };
}
