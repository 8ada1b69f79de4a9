// The entry point of the analysis expression language: compile once, evaluate per measurement.
import type { ExpressionNode } from './ast.ts';
import { evaluateExpression } from './evaluate-expression.ts';
import { ExpressionEvaluationError } from './expression-evaluation-error.ts';
import { parseExpression } from './parse.ts';
import { typeName } from './expression-value.ts';

/** A parsed expression, safe to evaluate any number of times. */
export interface CompiledExpression {
  readonly source: string;
  /**
   * Evaluates against `scope` (e.g. `{ result }`).
   * @throws ExpressionEvaluationError on a runtime failure, ExpressionLimitError past a safety bound.
   */
  evaluate(scope: Readonly<Record<string, unknown>>): unknown;
}

// The one variable an Argo condition reads: the measured value.
const VARIABLES: ReadonlySet<string> = new Set(['result']);

/**
 * Parses an expr-lang style expression (the language Argo Rollouts conditions are written in).
 * Never uses eval or Function: the source becomes a syntax tree walked by a small interpreter that
 * only reads own data properties of plain objects and arrays.
 * @throws ExpressionSyntaxError with the column, or ExpressionLimitError for over-long or over-deep input.
 */
export function compileExpression(source: string): CompiledExpression {
  const ast: ExpressionNode = parseExpression(source, { variables: VARIABLES });
  return {
    source,
    evaluate: (scope) => evaluateExpression(ast, scope, source),
  };
}

/**
 * Evaluates a compiled condition over a measured `result`; the answer must be a bool, as in Argo.
 * @throws ExpressionEvaluationError when it is not, or when evaluation fails.
 */
export function evaluateCondition(condition: CompiledExpression, result: unknown): boolean {
  const value = condition.evaluate({ result });
  if (typeof value !== 'boolean') {
    throw new ExpressionEvaluationError(`expected bool, but got ${typeName(value)}`, condition.source, 1);
  }
  return value;
}
