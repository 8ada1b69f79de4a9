// The error for an analysis condition that cannot be parsed (or names something it may not use).
import { expressionErrorMessage } from './expression-error-message.ts';

/** An expression that is not valid Rollgate/expr syntax; `column` is 1-based into `expression`. */
export class ExpressionSyntaxError extends Error {
  override readonly name = 'ExpressionSyntaxError';
  readonly code = 'rollgate.analysis.expression.syntax';

  constructor(
    readonly reason: string,
    /** The expression as written (cut to 200 characters, since inputs can be huge). */
    readonly expression: string,
    /** 1-based column of the offending character. */
    readonly column: number,
  ) {
    super(expressionErrorMessage(reason, expression, column));
  }
}
