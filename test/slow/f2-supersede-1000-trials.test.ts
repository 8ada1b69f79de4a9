// F2 (slow suite): 1,000 randomized trials of revisions and aborts at random moments under 30 % injected 409s.
import { describe, expect, it } from 'vitest';
import { MAX_RECONCILES_PER_TRIAL, runF2Trials } from '../integration/reconcile/f2-trials.ts';

describe('F2 at scale: new revisions mid-canary under conflicts', () => {
  it('converges in every one of 1,000 trials', async () => {
    const result = await runF2Trials({ trials: 1_000, seed: 1_000 });
    expect(result.failures).toEqual([]);
    expect(result.violations).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(1_000);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  });
});
