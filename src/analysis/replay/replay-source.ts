// Where a replay's measurements come from: a registry of providers plus when the source has nothing more for a metric.
import type { MetricProviderRegistry } from '../providers/metric-provider.ts';

/**
 * What {@link replayAnalysisRun} measures with. `providers` answer as in a live run (recorded values,
 * or a real provider queried at the replay's clock); `exhausted` says a metric has no more answers at
 * `now` — the past run ended there, or the range does — and the replay then terminates the run there,
 * as the rollout would have.
 */
export interface ReplaySource {
  providers: MetricProviderRegistry;
  exhausted(metricName: string, now: Date): boolean;
  /** What the reader should know about the source (measurements not kept, metrics never measured). */
  notes: readonly string[];
}
