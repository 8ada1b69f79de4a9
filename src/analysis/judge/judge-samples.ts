// The canary-versus-stable verdict (pure): a Mann-Whitney test and a tolerance on the shift of medians.
import { JUDGE_DEFAULTS, type JudgeFields } from '../../manifest/judge-fields.ts';
import { mannWhitneyU } from './mann-whitney.ts';

/** How {@link judgeSamples} decides (a judge metric's fields, read by `readJudgeFields`); see docs/analysis.md, "judge". */
export type JudgeSettings = JudgeFields;

/** One side's points, summarised for the stored measurement. */
export interface SampleSummary {
  n: number;
  median: number;
}

/** The judge's answer; `pass` / `fail` / `inconclusive` become Successful / Failed / Inconclusive. */
export interface JudgeVerdict {
  verdict: 'pass' | 'fail' | 'inconclusive';
  /** One sentence a person reads in the run's status. */
  reason: string;
  canary: SampleSummary;
  stable: SampleSummary;
  /** Absent when there were too few points to test. */
  pValue?: number;
  /** (canary median − stable median) / |stable median|; ±Infinity when the stable median is 0 and the canary's is not. */
  shift?: number;
}

function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function relativeShift(canary: number, stable: number): number {
  if (stable !== 0) return (canary - stable) / Math.abs(stable);
  if (canary === 0) return 0;
  return canary > 0 ? Infinity : -Infinity;
}

function isBad(shift: number, settings: JudgeSettings): boolean {
  switch (settings.direction) {
    case 'increase':
      return shift > settings.tolerance;
    case 'decrease':
      return shift < -settings.tolerance;
    default:
      return Math.abs(shift) > settings.tolerance;
  }
}

const percent = (x: number): string =>
  Number.isFinite(x) ? `${(Math.abs(x) * 100).toFixed(1)} %` : 'infinitely';
const number = (x: number): string => String(Number(x.toPrecision(6)));

/**
 * Compares the canary's points with the stable's over one window. NaN and ±Inf points are left out
 * (a scrape gap is no evidence). Too few points on either side → inconclusive. Otherwise a two-sided
 * Mann-Whitney test says whether the two differ at all (p < 1 − confidence), and the relative shift
 * of the medians says by how much: the canary fails only when both hold — the difference is real
 * and larger than the tolerance in the bad direction. A real but smaller change passes, as in
 * Kayenta's judge, so a large sample does not fail a canary for a harmless 1 % shift.
 */
export function judgeSamples(
  canaryPoints: readonly number[],
  stablePoints: readonly number[],
  settings: JudgeSettings = JUDGE_DEFAULTS,
): JudgeVerdict {
  const canarySorted = canaryPoints.filter(Number.isFinite).sort((x, y) => x - y);
  const stableSorted = stablePoints.filter(Number.isFinite).sort((x, y) => x - y);
  const canary = { n: canarySorted.length, median: median(canarySorted) };
  const stable = { n: stableSorted.length, median: median(stableSorted) };
  if (canary.n < settings.minSamples || stable.n < settings.minSamples) {
    return {
      verdict: 'inconclusive',
      reason: `not enough data: canary ${canary.n}, stable ${stable.n} points (minSamples ${settings.minSamples})`,
      canary,
      stable,
    };
  }
  const { pValue } = mannWhitneyU(canarySorted, stableSorted);
  const shift = relativeShift(canary.median, stable.median);
  const alpha = 1 - settings.confidence;
  const where = `canary median ${number(canary.median)} is ${percent(shift)} ${shift >= 0 ? 'above' : 'below'} stable ${number(stable.median)}`;
  const stats = `Mann-Whitney p = ${pValue.toPrecision(3)}, tolerance ${percent(settings.tolerance)}, ${settings.direction} is bad`;
  if (pValue < alpha && isBad(shift, settings))
    return { verdict: 'fail', reason: `${where} (${stats})`, canary, stable, pValue, shift };
  const why = pValue < alpha ? 'within tolerance' : 'no significant difference';
  return { verdict: 'pass', reason: `${why}: ${where} (${stats})`, canary, stable, pValue, shift };
}
