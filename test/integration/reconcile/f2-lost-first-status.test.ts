// F2 (default suite): trials 86-89 of seed 42 in the sandbox seeded 128 (a batch an earlier split of the
// 100 trials made). Trial 86's first status write and its re-plans all got 409 and a new template arrived
// before the retry: the planner, seeing no stable, went to the new template at full scale while the
// first ReplicaSet still ran pods, two ReplicaSets with pods and neither named stable.
import { describe, expect, it } from 'vitest';
import { MAX_RECONCILES_PER_TRIAL, runF2Batch } from './f2-trials.ts';

describe('F2: a new revision before the first status ever landed', () => {
  it('records the first ReplicaSet as stable before the canary: one canary at a time, and all four converge', async () => {
    const result = await runF2Batch({ seed: 42, from: 86, trials: 4, sandboxSeed: 128 });
    expect(result.violations).toEqual([]);
    expect(result.failures).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(4);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  }, 120_000);
});
