// The metric provider contract and the registry that picks a provider for a metric by its provider key.
import type { Logger } from '../../log/logger.ts';
import type { AnalysisRun, Measurement, Metric } from '../../manifest/analysis.ts';
import { MetricProviderError } from './metric-provider-error.ts';

/** What a provider gets besides the metric: the time, a logger, and the measurement it left in flight. */
export interface MeasureContext {
  now: Date;
  logger: Logger;
  /** The metric's last measurement when it is still in flight (e.g. a Job started earlier). */
  inFlight?: Measurement;
}

/**
 * One provider's answer. Value providers return `value` (what conditions see as `result`) and `raw`
 * (the text stored as the measurement's value). Providers that judge by themselves (job, kayenta, judge) set
 * `phase`; `phase: 'Running'` means "still in flight, ask me again in `resumeAfterMs`".
 */
export interface ProviderMeasurement {
  value: unknown;
  raw?: string;
  phase?: 'Running' | 'Successful' | 'Failed' | 'Inconclusive' | 'Error';
  message?: string;
  metadata?: Record<string, string>;
  resumeAfterMs?: number;
}

/** A metric source. Add one by writing one file that implements this and registering it. */
export interface MetricProvider {
  /** The key under `metric.provider` this provider serves ('prometheus', 'web', 'job', …). */
  readonly type: string;
  /** Takes (or, with ctx.inFlight, checks) one measurement. Throws MetricProviderError when it cannot. */
  measure(metric: Metric, run: AnalysisRun, ctx: MeasureContext): Promise<ProviderMeasurement>;
  /** Stops an in-flight measurement (the run was terminated); best effort. */
  terminate?(metric: Metric, run: AnalysisRun, measurement: Measurement, ctx: MeasureContext): Promise<void>;
}

/** Providers by type. */
export interface MetricProviderRegistry {
  /** The provider for `metric`, or a MetricProviderError naming the unsupported or missing provider. */
  forMetric(metric: Metric): MetricProvider;
  /** Registered types, for docs and validation. */
  types(): string[];
}

/** The provider keys set on a metric (`prometheus`, `web`, …); a valid metric has exactly one. */
export function metricProviderKeys(metric: Pick<Metric, 'provider'>): string[] {
  return Object.entries(metric.provider)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k]) => k);
}

/** A registry over `providers`; a later provider of the same type replaces an earlier one. */
export function createMetricProviderRegistry(providers: readonly MetricProvider[]): MetricProviderRegistry {
  const byType = new Map(providers.map((p) => [p.type, p]));
  return {
    forMetric(metric) {
      const keys = metricProviderKeys(metric);
      if (keys.length !== 1) {
        throw new MetricProviderError(
          'provider',
          `exactly one provider must be set, found ${keys.length === 0 ? 'none' : keys.join(', ')}`,
          metric.name,
        );
      }
      const type = keys[0] as string;
      const provider = byType.get(type);
      if (provider === undefined) {
        throw new MetricProviderError(
          type,
          `provider "${type}" is not supported yet (supported: ${[...byType.keys()].join(', ')})`,
          metric.name,
        );
      }
      return provider;
    },
    types: () => [...byType.keys()],
  };
}
