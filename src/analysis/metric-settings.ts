// A metric's effective timing and limits, with Argo's defaults applied and every field validated.
import type { Metric } from '../manifest/analysis.ts';
import { parseDuration } from '../manifest/duration.ts';
import { MetricSettingsError } from './metric-settings-error.ts';

/** Argo's defaults: failureLimit 0, inconclusiveLimit 0, consecutiveErrorLimit 4. */
export const DEFAULT_FAILURE_LIMIT = 0;
export const DEFAULT_INCONCLUSIVE_LIMIT = 0;
export const DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4;
/** How soon an errored measurement is retried when the metric has no (shorter) interval, as in Argo. */
export const ERROR_RETRY_INTERVAL_MS = 10_000;

/** The numbers the planner works with; `undefined` limits mean "no limit". */
export interface MetricSettings {
  intervalMs?: number;
  initialDelayMs: number;
  /** How many non-error measurements complete the metric; undefined = runs until terminated. */
  count?: number;
  failureLimit?: number;
  inconclusiveLimit?: number;
  consecutiveErrorLimit?: number;
  consecutiveSuccessLimit?: number;
}

function intField(metric: Metric, field: string, value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'number' ? value : /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n))
    throw new MetricSettingsError(metric.name, field, `must be an integer, got ${JSON.stringify(value)}`);
  return n;
}

function durationField(
  metric: Metric,
  field: string,
  value: string | number | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseDuration(value);
  } catch (error) {
    throw new MetricSettingsError(metric.name, field, (error as Error).message);
  }
}

// A negative limit means "no limit" (Argo documents -1 for failureLimit; we read every limit the same way).
const limit = (n: number | undefined, fallback: number | undefined): number | undefined => {
  const value = n ?? fallback;
  return value === undefined || value < 0 ? undefined : value;
};

/**
 * Reads a metric's settings. Count: as written when > 0 (more than 1 needs an interval); otherwise 1
 * without an interval, unbounded with one.
 * @throws MetricSettingsError naming the field.
 */
export function metricSettings(metric: Metric): MetricSettings {
  const intervalMs = durationField(metric, 'interval', metric.interval);
  const count = intField(metric, 'count', metric.count);
  const consecutiveSuccessLimit = intField(metric, 'consecutiveSuccessLimit', metric.consecutiveSuccessLimit);
  const settings: MetricSettings = {
    initialDelayMs: durationField(metric, 'initialDelay', metric.initialDelay) ?? 0,
    failureLimit: limit(intField(metric, 'failureLimit', metric.failureLimit), DEFAULT_FAILURE_LIMIT),
    inconclusiveLimit: limit(
      intField(metric, 'inconclusiveLimit', metric.inconclusiveLimit),
      DEFAULT_INCONCLUSIVE_LIMIT,
    ),
    consecutiveErrorLimit: limit(
      intField(metric, 'consecutiveErrorLimit', metric.consecutiveErrorLimit),
      DEFAULT_CONSECUTIVE_ERROR_LIMIT,
    ),
  };
  if (intervalMs !== undefined && intervalMs > 0) settings.intervalMs = intervalMs;
  if (count !== undefined && count > 1 && settings.intervalMs === undefined) {
    // As Argo's validation: without an interval there would be no time for the second measurement.
    throw new MetricSettingsError(
      metric.name,
      'count',
      `is ${count} but there is no interval (count > 1 needs one)`,
    );
  }
  if (count !== undefined && count > 0) settings.count = count;
  else if (settings.intervalMs === undefined) settings.count = 1;
  if (consecutiveSuccessLimit !== undefined && consecutiveSuccessLimit > 0)
    settings.consecutiveSuccessLimit = consecutiveSuccessLimit;
  return settings;
}
