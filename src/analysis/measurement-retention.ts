// How many measurements of a metric a run keeps in its status (measurementRetention, default 10 as in Argo).
import type { AnalysisRun } from '../manifest/analysis.ts';
import { metricNameMatches } from './metric-name-pattern.ts';

/** Argo's DefaultMeasurementHistoryLimit. */
export const DEFAULT_MEASUREMENT_RETENTION = 10;

/** The number of measurements kept for `metricName`: the first matching retention entry, else 10. */
export function measurementRetentionLimit(run: Pick<AnalysisRun, 'spec'>, metricName: string): number {
  const entry = run.spec.measurementRetention?.find((r) => metricNameMatches(r.metricName, metricName));
  return entry !== undefined && entry.limit > 0 ? entry.limit : DEFAULT_MEASUREMENT_RETENTION;
}

/** True when the metric runs in dry-run mode: its results never change the run's phase. */
export function isDryRunMetric(run: Pick<AnalysisRun, 'spec'>, metricName: string): boolean {
  return run.spec.dryRun?.some((d) => metricNameMatches(d.metricName, metricName)) ?? false;
}
