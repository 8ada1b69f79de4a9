// Judges one measured value against a metric's successCondition / failureCondition, as Argo does.
import type { Metric } from '../manifest/analysis.ts';
import {
  compileExpression,
  evaluateCondition,
  type CompiledExpression,
} from './expression/compile-expression.ts';

/** The phase a measured value earns, with the reason when it is an Error. */
export interface MeasurementVerdict {
  phase: 'Successful' | 'Failed' | 'Inconclusive' | 'Error';
  message?: string;
}

// Conditions repeat on every measurement of every run; parsing once is both faster and deterministic.
const compiled = new Map<string, CompiledExpression>();
const MAX_CACHED = 1000;

function compileCached(source: string): CompiledExpression {
  let expression = compiled.get(source);
  if (expression === undefined) {
    expression = compileExpression(source);
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(source, expression);
  }
  return expression;
}

function test(condition: string | undefined, value: unknown, which: string): boolean | { error: string } {
  if (condition === undefined || condition.trim() === '') return false;
  try {
    return evaluateCondition(compileCached(condition), value);
  } catch (error) {
    return { error: `${which}: ${(error as Error).message}` };
  }
}

/**
 * Evaluates a measured `value`:
 * - neither condition set → Successful (Argo's code; see docs/analysis.md for why we keep it);
 * - only successCondition → Successful when true, else Failed;
 * - only failureCondition → Failed when true, else Successful;
 * - both → Failed when the failure condition holds (it wins), Successful when only success holds,
 *   Inconclusive when neither does.
 * A condition that cannot be parsed or evaluated makes the measurement an Error, never a crash.
 */
export function evaluateMeasurement(
  metric: Pick<Metric, 'successCondition' | 'failureCondition'>,
  value: unknown,
): MeasurementVerdict {
  const hasSuccess = metric.successCondition !== undefined && metric.successCondition.trim() !== '';
  const hasFailure = metric.failureCondition !== undefined && metric.failureCondition.trim() !== '';
  const success = test(metric.successCondition, value, 'successCondition');
  if (typeof success === 'object') return { phase: 'Error', message: success.error };
  const failure = test(metric.failureCondition, value, 'failureCondition');
  if (typeof failure === 'object') return { phase: 'Error', message: failure.error };
  if (!hasSuccess && !hasFailure) return { phase: 'Successful' };
  const failed = hasFailure ? failure : !success;
  const succeeded = hasSuccess ? success : !failure;
  if (failed) return { phase: 'Failed' };
  if (succeeded) return { phase: 'Successful' };
  return { phase: 'Inconclusive' };
}

/**
 * Compiles a metric's conditions, for validating templates before any run exists.
 * @throws ExpressionSyntaxError / ExpressionLimitError for the first condition that does not compile.
 */
export function compileMetricConditions(metric: Pick<Metric, 'successCondition' | 'failureCondition'>): void {
  for (const condition of [metric.successCondition, metric.failureCondition]) {
    if (condition !== undefined && condition.trim() !== '') compileCached(condition);
  }
}
