// Order statistics for benchmark samples: one definition of percentile and median for every bench.

/** The `p`th percentile (nearest rank, rounding down) of `values`; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** The median of `values` (the upper middle for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}
