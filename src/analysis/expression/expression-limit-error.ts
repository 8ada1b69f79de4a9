// The error for an analysis condition that exceeds a safety bound (length, nesting, evaluation steps, size).
import { expressionErrorMessage } from './expression-error-message.ts';

/** Which bound was hit; limits exist so a hostile or runaway expression cannot stall the controller. */
export type ExpressionLimit = 'length' | 'depth' | 'steps' | 'size';

/** An expression (or its evaluation) went past one of the fixed safety limits. */
export class ExpressionLimitError extends Error {
  override readonly name = 'ExpressionLimitError';
  readonly code = 'rollgate.analysis.expression.limit';

  constructor(
    readonly limit: ExpressionLimit,
    readonly max: number,
    readonly expression: string,
    /** 1-based column where the limit was hit (1 when it concerns the whole input). */
    readonly column: number,
  ) {
    super(expressionErrorMessage(`expression exceeds the ${limit} limit of ${max}`, expression, column));
  }
}
