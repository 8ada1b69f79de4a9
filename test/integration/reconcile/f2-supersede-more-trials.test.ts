// F2 (default suite): trials 52-99 of seed 42's sequence, the same trials as when the 100 ran in one file
// (f2-supersede-under-conflicts.test.ts has 0-51; both split at a batch boundary): a file of their own so the two halves take a fork each.
import { describe, expect, it } from 'vitest';
import { MAX_RECONCILES_PER_TRIAL, runF2Trials } from './f2-trials.ts';

describe('F2: new revisions mid-canary under conflicts, more trials', () => {
  it('converges to the newest revision fully promoted (or aborted when told) in every one of trials 52-99', async () => {
    const result = await runF2Trials({ trials: 48, seed: 42, from: 52 });
    expect(result.failures).toEqual([]);
    expect(result.violations).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(48);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  }, 180_000);
});
