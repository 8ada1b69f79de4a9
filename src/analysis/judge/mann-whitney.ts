// The Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples, large-sample form with ties.
import { normalUpperTail } from './standard-normal.ts';

/** The test's outcome for samples `a` and `b`. */
export interface MannWhitneyResult {
  /** U of the first sample: how many (a, b) pairs have a > b, ties counting one half. */
  u: number;
  /** The normal approximation's z (continuity-corrected); positive when `a` tends to be larger. */
  z: number;
  /** Two-sided p-value: how likely a difference this large is when both come from one distribution. */
  pValue: number;
}

/**
 * Ranks the pooled samples (ties get their average rank), takes U of `a`, and compares it with its
 * mean n·m/2 under a variance corrected for ties. The normal approximation is what every statistics
 * package uses beyond a few dozen points; the judge asks for more points than that before it tests
 * (`minSamples`), so no exact table is needed. Two samples made of one repeated value have no
 * variance: p = 1 (nothing tells them apart). Both samples must be non-empty and finite.
 */
export function mannWhitneyU(a: readonly number[], b: readonly number[]): MannWhitneyResult {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) throw new RangeError('both samples need at least one value');
  const pooled = [
    ...a.map((value) => ({ value, first: true })),
    ...b.map((value) => ({ value, first: false })),
  ].sort((x, y) => x.value - y.value);
  const total = n + m;
  let rankSumA = 0;
  let tieTerm = 0;
  for (let i = 0; i < total;) {
    let j = i;
    while (
      j + 1 < total &&
      (pooled[j + 1] as { value: number }).value === (pooled[i] as { value: number }).value
    )
      j++;
    const rank = (i + j + 2) / 2; // ranks are 1-based: positions i..j share their mean
    const tied = j - i + 1;
    if (tied > 1) tieTerm += tied ** 3 - tied;
    for (let k = i; k <= j; k++) if ((pooled[k] as { first: boolean }).first) rankSumA += rank;
    i = j + 1;
  }
  const u = rankSumA - (n * (n + 1)) / 2;
  const mean = (n * m) / 2;
  const variance = ((n * m) / 12) * (total + 1 - tieTerm / (total * (total - 1) || 1));
  if (!(variance > 0)) return { u, z: 0, pValue: 1 };
  const distance = Math.max(0, Math.abs(u - mean) - 0.5);
  const z = (Math.sign(u - mean) * distance) / Math.sqrt(variance);
  return { u, z, pValue: Math.min(1, 2 * normalUpperTail(Math.abs(z))) };
}
