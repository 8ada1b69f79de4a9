// F2 (default suite): 100 randomized trials — replicas 1..5, revisions and aborts at random moments, 30 % injected 409s — all converge.
// The first 52 of seed 42's trials; the other 48 are in f2-supersede-more-trials.test.ts, and the
// argoproj.io group's in f2-supersede-argo-group.test.ts: CPU-bound runs, a fork each.
import { describe, expect, it } from 'vitest';
import { MAX_RECONCILES_PER_TRIAL, runF2Trials } from './f2-trials.ts';

describe('F2: new revisions mid-canary under conflicts', () => {
  it('converges to the newest revision fully promoted (or aborted when told) in every one of trials 0-51', async () => {
    const result = await runF2Trials({ trials: 52, seed: 42 });
    expect(result.failures).toEqual([]);
    expect(result.violations).toEqual([]);
    // The conflicts really happened, and were absorbed by re-reading and re-planning.
    expect(result.conflicts).toBeGreaterThan(52);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  }, 180_000);
});
