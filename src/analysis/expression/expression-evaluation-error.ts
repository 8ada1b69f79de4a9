// The error for an analysis condition that parsed but failed while being evaluated against a result.
import { expressionErrorMessage } from './expression-error-message.ts';

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
    super(expressionErrorMessage(reason, expression, column));
  }
}
