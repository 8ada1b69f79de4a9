// The error for a metric whose timing or limit fields cannot be read (e.g. "count: abc" after arg substitution).

/** A metric field that is not a valid duration or integer; the run reports it as the metric's Error. */
export class MetricSettingsError extends Error {
  override readonly name = 'MetricSettingsError';
  readonly code = 'rollgate.analysis.metric-settings';

  constructor(
    readonly metricName: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`metric "${metricName}": ${field} ${reason}`);
  }
}
