// The error for two merged analysis templates that both define a metric of the same name.

/** Metric names must be unique within a run, since results are keyed by name. */
export class DuplicateMetricError extends Error {
  override readonly name = 'DuplicateMetricError';
  readonly code = 'rollgate.analysis.duplicate-metric';

  constructor(
    readonly metricName: string,
    readonly templates: readonly string[],
  ) {
    super(`metric "${metricName}" is defined more than once (templates: ${templates.join(', ')})`);
  }
}
