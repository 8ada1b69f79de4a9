// The error a metric provider raises when it cannot take a measurement (bad config, network, bad response).

/** A measurement that could not be taken; the run records it as an Error measurement with this message. */
export class MetricProviderError extends Error {
  override readonly name = 'MetricProviderError';
  readonly code = 'rollgate.analysis.provider';

  constructor(
    /** The provider type ('prometheus', 'web', 'job', …). */
    readonly provider: string,
    readonly reason: string,
    /** The metric being measured, when known. */
    readonly metricName?: string,
  ) {
    super(`${provider}${metricName ? ` metric "${metricName}"` : ''}: ${reason}`);
  }
}
