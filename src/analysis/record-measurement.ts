// Adds one measurement to an AnalysisRun's status (pure): counters, consecutive streaks, bounded history.
import type { AnalysisRun, Measurement, MetricResult } from '../manifest/analysis.ts';
import { isCompletedPhase } from './analysis-phase.ts';
import { isDryRunMetric, measurementRetentionLimit } from './measurement-retention.ts';

/**
 * Returns a copy of `run` with `measurement` recorded for `metricName`. An in-flight measurement (no
 * `finishedAt`, e.g. a running Job) is replaced by the next one recorded; completed ones are appended
 * and counted as Argo counts them: Error measurements do not count toward `count`, they grow
 * `consecutiveError`; any other completed measurement resets it. History is trimmed to the metric's
 * measurementRetention limit (default 10); the counters keep the full tally.
 * Phases are not re-assessed here: call planAnalysisRun on the result for the next status.
 */
export function recordMeasurement(
  run: AnalysisRun,
  metricName: string,
  measurement: Measurement,
  now: Date,
): AnalysisRun {
  const status = run.status ?? {};
  const results = [...(status.metricResults ?? [])];
  let index = results.findIndex((r) => r.name === metricName);
  if (index < 0) {
    results.push({
      name: metricName,
      phase: 'Running',
      ...(isDryRunMetric(run, metricName) && { dryRun: true }),
    });
    index = results.length - 1;
  }
  const previous = results[index] as MetricResult;
  const result: MetricResult = {
    ...previous,
    phase: previous.phase === 'Pending' ? 'Running' : previous.phase,
  };
  const measurements = [...(previous.measurements ?? [])];
  const last = measurements.at(-1);
  const completed = isCompletedPhase(measurement.phase);
  const nowIso = now.toISOString();
  const recorded: Measurement = {
    ...measurement,
    startedAt: measurement.startedAt ?? (last && !last.finishedAt ? last.startedAt : undefined) ?? nowIso,
    ...(completed && { finishedAt: measurement.finishedAt ?? nowIso }),
  };
  if (last !== undefined && last.finishedAt === undefined) measurements[measurements.length - 1] = recorded;
  else measurements.push(recorded);
  const limit = measurementRetentionLimit(run, metricName);
  result.measurements = measurements.slice(Math.max(0, measurements.length - limit));

  if (completed) {
    const bump = (key: 'successful' | 'failed' | 'inconclusive' | 'error'): void => {
      result[key] = (result[key] ?? 0) + 1;
    };
    switch (measurement.phase) {
      case 'Successful':
        bump('successful');
        break;
      case 'Failed':
        bump('failed');
        break;
      case 'Inconclusive':
        bump('inconclusive');
        break;
      default:
        bump('error');
    }
    if (measurement.phase === 'Error') {
      result.consecutiveError = (result.consecutiveError ?? 0) + 1;
      result.consecutiveSuccess = 0;
      if (measurement.message !== undefined) result.message = measurement.message;
    } else {
      result.count = (result.count ?? 0) + 1;
      result.consecutiveError = 0;
      result.consecutiveSuccess =
        measurement.phase === 'Successful' ? (result.consecutiveSuccess ?? 0) + 1 : 0;
      delete result.message;
    }
  }
  results[index] = result;
  return { ...run, status: { ...status, startedAt: status.startedAt ?? nowIso, metricResults: results } };
}
