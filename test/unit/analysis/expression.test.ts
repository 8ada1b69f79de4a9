// The analysis expression language: Argo-style conditions, expr-lang operators, errors with columns, and safety bounds.
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../src/analysis/expression/compile-expression.ts';
import { ExpressionEvaluationError } from '../../../src/analysis/expression/expression-evaluation-error.ts';
import { ExpressionLimitError } from '../../../src/analysis/expression/expression-limit-error.ts';
import { EXPRESSION_LIMITS } from '../../../src/analysis/expression/expression-limits.ts';
import { ExpressionSyntaxError } from '../../../src/analysis/expression/expression-syntax-error.ts';

const run = (source: string, result: unknown): unknown => compileExpression(source).evaluate({ result });

describe('conditions as Argo users write them', () => {
  it.each<[string, unknown, unknown]>([
    ['result[0] >= 0.95', [0.97], true],
    ['result[0] >= 0.95', [0.5], false],
    ['len(result) == 0', [], true],
    ['len(result) == 0', [1], false],
    ['result == "true"', 'true', true],
    ["result == 'It worked!'", 'It worked!', true],
    ['asInt(result) < 10', '7', true],
    ['asInt(result) < 10', 12.9, false],
    ['asFloat(result) > 0.5', '0.75', true],
    ['asFloat(result) > 0.5', 'NaN', false],
    ['all(result, {# > 0.9})', [0.95, 0.99], true],
    ['all(result, {# > 0.9})', [0.95, 0.2], false],
    ['all(result, # > 0.9)', [], true],
    ['any(result, {# > 0.9})', [0.1, 0.99], true],
    ['none(result, {# > 0.9})', [0.1, 0.2], true],
    ['one(result, {# == 1})', [1, 2, 1], false],
    ['len(filter(result, {# > 1})) == 2', [1, 2, 3], true],
    ['map(result, {# * 100})', [0.5, 1], [50, 100]],
    ['count(result, {# < 1})', [0.5, 1, 0.2], 2],
    ['isNaN(result)', NaN, true],
    ['isNaN(result[0])', [1], false],
    ['isInf(result)', -Infinity, true],
    ['isNil(result)', null, true],
    ['default(result, 0) < 1', null, true],
    ['default(result, 0) < 1', 5, false],
    ['result > 1 && result < 5', 3, true],
    ['result > 1 and result < 5', 6, false],
    ['result < 1 || result > 5', 6, true],
    ['result < 1 or result > 5', 3, false],
    ['!(result > 1)', 0, true],
    ['not (result > 1)', 2, false],
    ['result in [200, 201]', 201, true],
    ['result not in [200, 201]', 500, true],
    ['"ok" in result', { ok: 1 }, true],
    ['result > 10 ? "high" : "low"', 11, 'high'],
    ['result.status == "healthy"', { status: 'healthy' }, true],
    ['result["p99"] < 250', { p99: 200 }, true],
    ['result.data.items[1].value', { data: { items: [{ value: 1 }, { value: 2 }] } }, 2],
    ['result.missing == nil', {}, true],
    ['result?.a?.b', null, null],
    ['result.a ?? "fallback"', {}, 'fallback'],
    ['(result[0] + result[1]) / 2', [1, 2], 1.5],
    ['result % 3', 10, 1],
    ['2 ** 10', 0, 1024],
    ['2 ^ 3 ^ 2', 0, 512],
    ['-result', 4, -4],
    ['1 + 2 * 3', 0, 7],
    ['(1 + 2) * 3', 0, 9],
    ['"a" + result', 'b', 'ab'],
    ['result[-1]', [1, 2, 3], 3],
    ['result[1:3]', [1, 2, 3, 4], [2, 3]],
    ['all(result, .ok)', [{ ok: true }, { ok: true }], true],
    ['result contains "err"', 'an error', true],
    ['result startsWith "2"', '200', true],
    ['1_000 + 0x10 + 1e2', 0, 1116],
    ['max(result) - min(result)', [3, 9, 4], 6],
    ['sum(result) / len(result) == mean(result)', [1, 2, 3], true],
    ['lower(result) == "ok"', 'OK', true],
    ['int("42") + float("0.5")', 0, 42.5],
    ['result == [1, {a: "x"}]', [1, { a: 'x' }], true],
    ['type(result)', 1.5, 'float'],
    ['result == nil', undefined, true],
  ])('%s with result %j → %j', (source, result, expected) => {
    expect(run(source, result)).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['true || true && false', true],
    ['true or true and false', true],
    ['false and true or true', true],
    ['false && true || true', true],
    ['2 ** 3 ^ 2', 512],
    ['2 ^ 3 ** 2', 512],
    ['-2 ** 2', -4],
    ['1 + 2 in [3]', true],
    ['1 + 1 not in [2]', false],
    ['1 < 2 == true', true],
    ['10 - 4 - 3', 3],
    ['2 * 3 % 4', 2],
    ['result ?? 1 + 1', 2],
    ['true ? 1 : false ? 2 : 3', 1],
    ['false ? 1 : false ? 2 : 3', 3],
    ['"abc" contains "a" and "abc" endsWith "c" or false', true],
  ])('binds %s as expr-lang does, whatever the operator is spelt', (source, expected) => {
    expect(run(source, null)).toEqual(expected);
  });

  it('parses the same way for \'single\' and "double" quoted strings with escapes', () => {
    expect(run(`result == 'it\\'s'`, "it's")).toBe(true);
    expect(run('result == "a\\"b\\n"', 'a"b\n')).toBe(true);
  });
});

describe('errors carry the column and never escape as crashes', () => {
  it.each<[string, number]>([
    ['result >', 9],
    ['result[0] >= ', 14],
    ['result @ 1', 8],
    ['unknownVar > 1', 1],
    ['len(result', 11],
    ['"unterminated', 1],
    ['result.', 8],
    ['foo(result)', 1],
  ])('%s is a syntax error at column %i', (source, column) => {
    let caught: unknown;
    try {
      compileExpression(source);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ExpressionSyntaxError);
    expect((caught as ExpressionSyntaxError).column).toBe(column);
    expect((caught as ExpressionSyntaxError).code).toBe('rollgate.analysis.expression.syntax');
  });

  it.each<[string, unknown, RegExp]>([
    ['result[0] > 1', [], /index out of range/],
    ['result > "a"', 1, /mismatched types int and string/],
    ['result && true', 1, /expects bool/],
    ['asInt(result)', 'abc', /cannot parse "abc" as an int/],
    ['asFloat(result)', 'x1', /cannot parse/],
    ['isNaN(result)', [1], /isNaN expects a number, got array/],
    ['result.a.b', { a: null }, /cannot fetch "b" from nil/],
    ['len(result)', 5, /invalid argument for len/],
    ['result % 0', 4, /divide by zero/],
    ['all(result, {# > 0})', 'str', /all expects an array/],
  ])('%s on %j fails with %s', (source, result, message) => {
    const expression = compileExpression(source);
    expect(() => expression.evaluate({ result })).toThrow(ExpressionEvaluationError);
    expect(() => expression.evaluate({ result })).toThrow(message);
  });

  it('says where in the expression each kind of error happened, with long expressions cut to 200 characters', () => {
    const messageOf = (act: () => unknown): string => {
      try {
        act();
      } catch (error) {
        return (error as Error).message;
      }
      return expect.unreachable();
    };
    expect(messageOf(() => compileExpression('result >'))).toMatch(/ \(column 9 of "result >"\)$/);
    expect(messageOf(() => run('result % 0', 4))).toMatch(
      /^.*divide by zero.* \(column \d+ of "result % 0"\)$/,
    );
    const huge = `result == "${'a'.repeat(EXPRESSION_LIMITS.maxLength)}"`;
    expect(messageOf(() => compileExpression(huge))).toBe(
      `expression exceeds the length limit of ${EXPRESSION_LIMITS.maxLength} (column 1 of ${JSON.stringify(huge.slice(0, 200))})`,
    );
  });

  it('points at the failing sub-expression', () => {
    try {
      run('len(result) > 0 && result[5] > 1', [1]);
      expect.unreachable();
    } catch (error) {
      expect((error as ExpressionEvaluationError).column).toBe(26);
    }
  });
});

describe('injection attempts are refused or bounded', () => {
  it.each([
    'constructor.constructor("return process")()',
    'result.constructor.constructor("return process")()',
    'result["constructor"]["constructor"]("x")',
    'result.__proto__',
    'result["__proto__"].polluted',
    'result.prototype',
    '{__proto__: 1}',
    'result.toString()',
    '(result)()',
    'process.exit(1)',
    'this',
    'globalThis',
    'require("fs")',
    'import("fs")',
    'eval("1")',
    'result matches "(a+)+$"',
  ])('%s does not compile', (source) => {
    expect(() => compileExpression(source)).toThrow(ExpressionSyntaxError);
  });

  it('refuses prototype keys built at run time', () => {
    const expression = compileExpression('result["__pro" + "to__"]');
    expect(() => expression.evaluate({ result: {} })).toThrow(/may not be used/);
    expect(() => run('result["constr" + "uctor"]', {})).toThrow(/may not be used/);
  });

  it('reads only own data: no inherited members, no getters run', () => {
    expect(run('result.hasOwnProperty', {})).toBeNull();
    expect(run('result.toString', {})).toBeNull();
    let called = false;
    const sneaky = Object.defineProperty({}, 'x', {
      get: () => {
        called = true;
        return 1;
      },
      enumerable: true,
    });
    expect(() => run('result.x', sneaky)).toThrow(/not plain data/);
    expect(called).toBe(false);
    expect(() => run('result.size', new Map([['size', 1]]))).toThrow(/cannot fetch/);
  });

  it('does not pollute Object.prototype', () => {
    expect(() => run('{a: 1}', null)).not.toThrow();
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('bounds input length', () => {
    const huge = `result == "${'a'.repeat(EXPRESSION_LIMITS.maxLength)}"`;
    expect(() => compileExpression(huge)).toThrow(ExpressionLimitError);
  });

  it('bounds nesting depth without overflowing the stack', () => {
    const deep = `${'('.repeat(5000)}1${')'.repeat(5000)}`.slice(0, 4000);
    expect(() => compileExpression(deep)).toThrow(ExpressionLimitError);
    expect(() => compileExpression(`${'!'.repeat(2000)}true`)).toThrow(ExpressionLimitError);
    expect(() => compileExpression(`${'-'.repeat(2000)}1`)).toThrow(ExpressionLimitError);
    expect(() => compileExpression(`result${'[0]'.repeat(1000)}`)).not.toThrow(RangeError);
  });

  it('bounds evaluation steps (nested predicates over a large result)', () => {
    const expression = compileExpression('all(result, {all(result, {all(result, {# >= 0})})})');
    const started = performance.now();
    expect(() => expression.evaluate({ result: Array.from({ length: 1000 }, () => 1) })).toThrow(
      ExpressionLimitError,
    );
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('bounds the size of built strings', () => {
    const long = 'x'.repeat(EXPRESSION_LIMITS.maxSize);
    expect(() => run('result + result', long)).toThrow(ExpressionLimitError);
  });

  it('accepts a huge measured result within the step budget', () => {
    expect(
      run(
        'len(result) == 50000',
        Array.from({ length: 50_000 }, () => 0.5),
      ),
    ).toBe(true);
  });
});
