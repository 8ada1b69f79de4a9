// Reads a `judge` metric's numeric fields (numbers or strings from args) with their defaults, refusing what cannot be meant.
import type { JudgeMetric } from './analysis.ts';
import { JudgeFieldError } from './judge-field-error.ts';

/** A judge's settings once read; the statistics in src/analysis/judge/ take exactly this shape. */
export interface JudgeFields {
  direction: 'increase' | 'decrease' | 'either';
  tolerance: number;
  confidence: number;
  minSamples: number;
}

/** As Kayenta's NetflixACAJudge: increases are bad and no effect is allowed unless told; 20 points, so the rank test's normal approximation holds. */
export const JUDGE_DEFAULTS: JudgeFields = {
  direction: 'increase',
  tolerance: 0,
  confidence: 0.95,
  minSamples: 20,
};

const NUMBER_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function readNumber(value: unknown, field: JudgeFieldError['field']): number | undefined {
  if (value === undefined) return undefined;
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && NUMBER_TEXT.test(value.trim())
        ? Number(value)
        : NaN;
  if (!Number.isFinite(n)) throw new JudgeFieldError(field, `must be a number, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * The judge's settings: `tolerance` ≥ 0 (a fraction: 0.05 is 5 %), `confidence` strictly between 0
 * and 1, `minSamples` a whole number ≥ 2 (a rank test needs two points a side to say anything).
 * @throws JudgeFieldError naming the first field that does not read.
 */
export function readJudgeFields(judge: JudgeMetric): JudgeFields {
  const tolerance = readNumber(judge.tolerance, 'tolerance') ?? JUDGE_DEFAULTS.tolerance;
  if (tolerance < 0) throw new JudgeFieldError('tolerance', `must be 0 or more, got ${tolerance}`);
  const confidence = readNumber(judge.confidence, 'confidence') ?? JUDGE_DEFAULTS.confidence;
  if (!(confidence > 0 && confidence < 1))
    throw new JudgeFieldError('confidence', `must be between 0 and 1 (0.95 for 95 %), got ${confidence}`);
  const minSamples = readNumber(judge.minSamples, 'minSamples') ?? JUDGE_DEFAULTS.minSamples;
  if (!Number.isInteger(minSamples) || minSamples < 2)
    throw new JudgeFieldError('minSamples', `must be a whole number of 2 or more, got ${minSamples}`);
  return { direction: judge.direction ?? JUDGE_DEFAULTS.direction, tolerance, confidence, minSamples };
}
