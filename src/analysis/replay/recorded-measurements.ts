// A replay source answering each metric with the measurements a past AnalysisRun recorded, in order.
import type { AnalysisRun, Measurement, Metric } from '../../manifest/analysis.ts';
import { isCompletedPhase } from '../analysis-phase.ts';
import { createMetricProviderRegistry, type MetricProvider } from '../providers/metric-provider.ts';
import { MetricProviderError } from '../providers/metric-provider-error.ts';
import { recordedValue, RecordedValueError } from './recorded-value.ts';
import type { ReplaySource } from './replay-source.ts';

/** Metadata a replayed measurement carries: which recorded measurement it is, and when that was taken. */
export const RECORDED_INDEX = 'rollgate.dev/recorded-index';
export const RECORDED_AT = 'rollgate.dev/recorded-at';

const TYPE = 'recorded';

interface Recording {
  measurements: Measurement[];
  /** 1-based index of the first kept measurement (earlier ones were trimmed by measurementRetention). */
  firstIndex: number;
  next: number;
}

/**
 * Answers a metric of the replayed template with the metric of the same name in `past`: its i-th
 * measurement the i-th time it is asked, whatever the new template's provider is. A recorded Error is
 * thrown again (an Error measurement, counted as before); a recorded phase of a provider that judged
 * by itself (job, judge) is kept as that phase, since there is nothing to re-judge; any other value is
 * read back ({@link recordedValue}) and judged by the new template's conditions. Only finished
 * measurements are replayed. The run's status keeps the last 10 measurements of a metric unless its
 * measurementRetention says more: earlier ones cannot be replayed, and a note says so.
 */
export function recordedMeasurements(past: AnalysisRun, metrics: readonly Metric[]): ReplaySource {
  const recordings = new Map<string, Recording>();
  const notes: string[] = [];
  for (const metric of metrics) {
    const result = past.status?.metricResults?.find((r) => r.name === metric.name);
    const measurements = (result?.measurements ?? []).filter(
      (m) => isCompletedPhase(m.phase) && m.finishedAt !== undefined,
    );
    const taken = (result?.count ?? 0) + (result?.error ?? 0);
    const firstIndex = Math.max(1, taken - measurements.length + 1);
    if (measurements.length === 0) notes.push(`metric "${metric.name}": no recorded measurement`);
    else if (firstIndex > 1)
      notes.push(
        `metric "${metric.name}": measurements 1–${firstIndex - 1} were not kept (measurementRetention), replay starts at ${firstIndex}`,
      );
    recordings.set(metric.name, { measurements, firstIndex, next: 0 });
  }
  const judgedByProvider = (metric: Metric): boolean =>
    metric.provider.job !== undefined || metric.provider.judge !== undefined;

  const provider: MetricProvider = {
    type: TYPE,
    measure(metric) {
      const recording = recordings.get(metric.name);
      const recorded = recording?.measurements[recording.next];
      if (recording === undefined || recorded === undefined)
        return Promise.reject(new MetricProviderError(TYPE, 'no recorded measurement left', metric.name));
      const index = recording.firstIndex + recording.next;
      recording.next++;
      const metadata = {
        [RECORDED_INDEX]: String(index),
        [RECORDED_AT]: recorded.finishedAt ?? recorded.startedAt ?? '',
      };
      if (recorded.phase === 'Error')
        return Promise.reject(
          new MetricProviderError(TYPE, recorded.message ?? 'recorded Error', metric.name),
        );
      if (judgedByProvider(metric))
        return Promise.resolve({
          value: recorded.value,
          ...(recorded.value !== undefined && { raw: recorded.value }),
          phase: recorded.phase as 'Successful' | 'Failed' | 'Inconclusive',
          ...(recorded.message !== undefined && { message: recorded.message }),
          metadata,
        });
      try {
        const value = recordedValue(recorded.value ?? '');
        return Promise.resolve({
          value,
          ...(recorded.value !== undefined && { raw: recorded.value }),
          metadata,
        });
      } catch (error) {
        if (error instanceof RecordedValueError)
          return Promise.reject(new MetricProviderError(TYPE, error.message, metric.name));
        throw error;
      }
    },
  };
  // Every metric, whatever its provider key, is answered from the recording.
  const registry = createMetricProviderRegistry([provider]);
  return {
    providers: { forMetric: () => provider, types: registry.types },
    exhausted(metricName) {
      const recording = recordings.get(metricName);
      return recording === undefined || recording.next >= recording.measurements.length;
    },
    notes,
  };
}
