// Random token soup and random values: the expression language only ever fails with its own typed errors.
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../src/analysis/expression/compile-expression.ts';
import { ExpressionEvaluationError } from '../../../src/analysis/expression/expression-evaluation-error.ts';
import { ExpressionLimitError } from '../../../src/analysis/expression/expression-limit-error.ts';
import { ExpressionSyntaxError } from '../../../src/analysis/expression/expression-syntax-error.ts';
// mulberry32, seeded, so a failing case reproduces.
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';

const PIECES = [
  'result',
  '#',
  '.',
  '?.',
  '[',
  ']',
  '(',
  ')',
  '{',
  '}',
  ',',
  ':',
  '?',
  '??',
  '0',
  '1',
  '-1',
  '0.5',
  '1e3',
  '"s"',
  "'t'",
  'nil',
  'true',
  'false',
  '+',
  '-',
  '*',
  '/',
  '%',
  '**',
  '^',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
  '!',
  'and',
  'or',
  'not',
  'in',
  'contains',
  'len',
  'all',
  'any',
  'map',
  'filter',
  'asInt',
  'asFloat',
  'isNaN',
  'default',
  'max',
  'split',
  'constructor',
  '__proto__',
  'x',
  '`',
  '\\',
  '"',
];

const VALUES: unknown[] = [
  null,
  0,
  1.5,
  NaN,
  -Infinity,
  'text',
  '12',
  true,
  [],
  [1, 2, 3],
  [0.9, NaN],
  { a: 1, b: [1] },
  [{ ok: true }],
];

const OWN_ERRORS = [ExpressionSyntaxError, ExpressionEvaluationError, ExpressionLimitError];

describe('expression fuzz', () => {
  it('compiles or refuses 1500 random token sequences, and evaluates the compiled ones, with typed errors only', () => {
    const random = new SeededRandom(42);
    const next = (): number => random.next();
    let compiled = 0;
    for (let i = 0; i < 1500; i++) {
      const length = 1 + Math.floor(next() * 12);
      const source = Array.from({ length }, () => PIECES[Math.floor(next() * PIECES.length)]).join(
        next() < 0.5 ? ' ' : '',
      );
      let expression;
      try {
        expression = compileExpression(source);
      } catch (error) {
        expect(
          OWN_ERRORS.some((E) => error instanceof E),
          `${source}: ${String(error)}`,
        ).toBe(true);
        continue;
      }
      compiled++;
      for (const result of VALUES) {
        try {
          expression.evaluate({ result });
        } catch (error) {
          expect(
            OWN_ERRORS.some((E) => error instanceof E),
            `${source} on ${JSON.stringify(result)}: ${String(error)}`,
          ).toBe(true);
        }
      }
    }
    expect(compiled).toBeGreaterThan(10);
    expect(({} as Record<string, unknown>)['a']).toBeUndefined();
  });

  it('evaluates 1500 random well-formed expressions over odd values with typed errors only', () => {
    const random = new SeededRandom(7);
    const next = (): number => random.next();
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const ATOMS = [
      'result',
      'result[0]',
      'result[-1]',
      'result.a',
      'result?.b',
      'len(result)',
      '1',
      '0',
      '-2.5',
      '"s"',
      'nil',
      'true',
      'result[1:]',
      '[1, "x"]',
      '{k: result}',
    ];
    const OPS = [
      '+',
      '-',
      '*',
      '/',
      '%',
      '**',
      '==',
      '!=',
      '<',
      '>=',
      '&&',
      '||',
      '??',
      'in',
      'not in',
      'contains',
    ];
    const WRAPS = [
      'len(%)',
      'asInt(%)',
      'asFloat(%)',
      'isNaN(%)',
      'default(%, 0)',
      'all(%, {# > 0})',
      'map(%, {# * 2})',
      'filter(%, .ok)',
      'max(%)',
      'string(%)',
      '!(%)',
      '(%)',
      '% ? 1 : 2',
    ];
    const build = (depth: number): string => {
      let out = pick(ATOMS);
      const terms = Math.floor(next() * 3);
      for (let i = 0; i < terms; i++)
        out += ` ${pick(OPS)} ${depth > 0 && next() < 0.4 ? build(depth - 1) : pick(ATOMS)}`;
      return next() < 0.4 ? pick(WRAPS).replace('%', out) : out;
    };
    let evaluated = 0;
    for (let i = 0; i < 1500; i++) {
      const source = build(2);
      const expression = compileExpression(source);
      for (const result of VALUES) {
        try {
          expression.evaluate({ result });
          evaluated++;
        } catch (error) {
          expect(
            OWN_ERRORS.some((E) => error instanceof E),
            `${source} on ${JSON.stringify(result)}: ${String(error)}`,
          ).toBe(true);
        }
      }
    }
    expect(evaluated).toBeGreaterThan(500);
  });
});
