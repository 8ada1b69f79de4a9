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
    /**
     * Set when the provider asked not to be called again so soon (HTTP 429): the measurement is an
     * Error like any other, and the metric is not measured again before this many milliseconds.
     */
    readonly retryAfterMs?: number,
  ) {
    super(`${provider}${metricName ? ` metric "${metricName}"` : ''}: ${reason}`);
  }
}
