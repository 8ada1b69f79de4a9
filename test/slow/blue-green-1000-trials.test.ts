// Blue-green (slow suite): 1,000 randomized trials of revisions, aborts, retries, promotions and failing
// analyses in random order under 30 % refused writes; the invariants hold after every pass and each converges.
import { describe, expect, it } from 'vitest';
import { MAX_PASSES_PER_TRIAL, runBlueGreenTrials } from '../unit/rollout/blue-green-trials.ts';

describe('blue-green at scale', () => {
  it('keeps the invariants and converges in every one of 1,000 trials', () => {
    const result = runBlueGreenTrials({ trials: 1_000, seed: 1_000 });
    expect(result.violations).toEqual([]);
    expect(result.failures).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(1_000);
    expect(result.maxPasses).toBeLessThan(MAX_PASSES_PER_TRIAL);
  });
});
