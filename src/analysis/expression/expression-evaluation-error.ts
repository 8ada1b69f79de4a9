// The error for an analysis condition that parsed but failed while being evaluated against a result.

/** A runtime failure (type mismatch, index out of range, bad conversion…); `column` is 1-based. */
export class ExpressionEvaluationError extends Error {
  override readonly name = 'ExpressionEvaluationError';
  readonly code = 'rollgate.analysis.expression.evaluation';

  constructor(
    readonly reason: string,
    readonly expression: string,
    /** 1-based column of the sub-expression that failed. */
    readonly column: number,
  ) {
    super(`${reason} (column ${column} of ${JSON.stringify(expression.slice(0, 200))})`);
  }
}
