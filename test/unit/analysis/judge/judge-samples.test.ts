// The canary-versus-stable judge's statistics: the Mann-Whitney test against published values, and the three verdicts.
import { describe, expect, it } from 'vitest';
import { judgeSamples, type JudgeSettings } from '../../../../src/analysis/judge/judge-samples.ts';
import { mannWhitneyU } from '../../../../src/analysis/judge/mann-whitney.ts';
import { normalUpperTail } from '../../../../src/analysis/judge/standard-normal.ts';

/** A seeded generator (mulberry32), so every run of the suite draws the same points. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` latencies (ms), log-normal like real ones: median `medianMs`, spread `sigma`. */
function latencies(n: number, medianMs: number, seed: number, sigma = 0.25): number[] {
  const random = seeded(seed);
  return Array.from({ length: n }, () => {
    const u = 1 - random();
    const v = random();
    const gaussian = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    return medianMs * Math.exp(sigma * gaussian);
  });
}

const SETTINGS: JudgeSettings = { direction: 'increase', tolerance: 0.05, confidence: 0.95, minSamples: 20 };

describe('standard normal tail', () => {
  it.each([
    [0, 0.5],
    [1.959964, 0.025],
    [3, 0.0013499],
    [-1, 0.8413447],
  ])('P(Z > %d) = %d', (z, p) => {
    expect(normalUpperTail(z)).toBeCloseTo(p, 6);
  });
});

describe('mannWhitneyU', () => {
  // ClickHouse's test of mannWhitneyUTest (tests/queries/0_stateless/01560_mann_whitney.sql) publishes
  // U = 223 and a two-sided, continuity-corrected p = 0.5426959774289482 for these two samples.
  const a = [
    310, 195, 530, 155, 530, 245, 385, 450, 465, 545, 170, 180, 125, 180, 230, 75, 430, 480, 495, 295,
  ];
  const b = [
    116, 171, 176, 421, 111, 326, 481, 111, 346, 441, 261, 411, 206, 521, 456, 446, 296, 51, 426, 261,
  ];

  it('matches a published U and p-value (ties included)', () => {
    const result = mannWhitneyU(a, b);
    expect(result.u).toBe(223);
    expect(result.pValue).toBeCloseTo(0.5426959774289482, 5);
  });

  it('is symmetric: swapping the samples flips z, keeps p', () => {
    const ab = mannWhitneyU(a, b);
    const ba = mannWhitneyU(b, a);
    expect(ba.u).toBe(a.length * b.length - ab.u);
    expect(ba.z).toBeCloseTo(-ab.z, 12);
    expect(ba.pValue).toBeCloseTo(ab.pValue, 12);
  });

  it('gives p = 1 for two samples of one repeated value', () => {
    expect(mannWhitneyU([5, 5, 5], [5, 5])).toEqual({ u: 3, z: 0, pValue: 1 });
  });

  it('refuses an empty sample', () => {
    expect(() => mannWhitneyU([], [1])).toThrow(RangeError);
  });
});

describe('judgeSamples (the issue’s checks)', () => {
  it('passes a canary drawn from the same distribution as the stable', () => {
    const verdict = judgeSamples(latencies(200, 100, 1), latencies(200, 100, 2), SETTINGS);
    expect(verdict.verdict).toBe('pass');
    expect(verdict.canary.n).toBe(200);
    expect(verdict.stable.n).toBe(200);
  });

  it('fails a canary whose latency is 10 % higher, at 200 points per side', () => {
    const verdict = judgeSamples(latencies(200, 110, 3), latencies(200, 100, 4), SETTINGS);
    expect(verdict.verdict).toBe('fail');
    expect(verdict.pValue).toBeLessThan(0.05);
    expect(verdict.shift).toBeGreaterThan(0.05);
    expect(verdict.reason).toMatch(
      /^canary median [\d.]+ is [\d.]+ % above stable [\d.]+ \(Mann-Whitney p = /,
    );
  });

  it('is inconclusive with 5 points per side, however different they look', () => {
    const verdict = judgeSamples(latencies(5, 200, 5), latencies(5, 100, 6), SETTINGS);
    expect(verdict.verdict).toBe('inconclusive');
    expect(verdict.reason).toBe('not enough data: canary 5, stable 5 points (minSamples 20)');
    expect(verdict.pValue).toBeUndefined();
  });
});

describe('judgeSamples (direction, tolerance, data)', () => {
  const stable = latencies(200, 100, 10);
  const higher = latencies(200, 110, 11);
  const lower = latencies(200, 90, 12);

  it('passes a real shift inside the tolerance', () => {
    const verdict = judgeSamples(higher, stable, { ...SETTINGS, tolerance: 0.2 });
    expect(verdict.verdict).toBe('pass');
    expect(verdict.reason).toMatch(/^within tolerance: /);
  });

  it.each<[JudgeSettings['direction'], number[], 'pass' | 'fail']>([
    ['increase', lower, 'pass'],
    ['increase', higher, 'fail'],
    ['decrease', lower, 'fail'],
    ['decrease', higher, 'pass'],
    ['either', lower, 'fail'],
    ['either', higher, 'fail'],
  ])('direction %s judges a shift of the canary', (direction, canary, want) => {
    expect(judgeSamples(canary, stable, { ...SETTINGS, direction }).verdict).toBe(want);
  });

  it('leaves NaN and infinite points out before counting', () => {
    const canary = [...latencies(19, 100, 13), NaN, Infinity, -Infinity];
    const verdict = judgeSamples(canary, stable, SETTINGS);
    expect(verdict.verdict).toBe('inconclusive');
    expect(verdict.canary.n).toBe(19);
  });

  it('reads a zero stable median as an infinite shift when the canary is above it', () => {
    const zeros = Array.from({ length: 30 }, () => 0);
    const some = Array.from({ length: 30 }, (_, i) => (i < 20 ? 1 : 0));
    const verdict = judgeSamples(some, zeros, SETTINGS);
    expect(verdict.verdict).toBe('fail');
    expect(verdict.shift).toBe(Infinity);
  });

  it('passes identical constant samples (no variance, nothing to tell apart)', () => {
    const same = Array.from({ length: 30 }, () => 7);
    expect(judgeSamples(same, same, SETTINGS).verdict).toBe('pass');
  });
});
