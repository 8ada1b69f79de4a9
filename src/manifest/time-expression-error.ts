// The error for a rangeQuery `start`/`end` that does not read as a time (or a `step` that is no duration).

/** A range-query time expression that cannot be evaluated; the measurement (or validate) reports it. */
export class TimeExpressionError extends Error {
  override readonly name = 'TimeExpressionError';
  readonly code = 'rollgate.analysis.time-expression';

  constructor(
    readonly expression: string,
    readonly reason: string,
  ) {
    super(`${JSON.stringify(expression.slice(0, 120))}: ${reason}`);
  }
}
