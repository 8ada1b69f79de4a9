// F2 (default suite): 100 randomized trials — replicas 1..5, revisions and aborts at random moments, 30 % injected 409s — all converge.
import { describe, expect, it } from 'vitest';
import { ARGO_API } from '../../../src/manifest/driven-api.ts';
import { MAX_RECONCILES_PER_TRIAL, runF2Trials } from './f2-trials.ts';

describe('F2: new revisions mid-canary under conflicts', () => {
  it('converges to the newest revision fully promoted (or aborted when told) in every one of 100 trials', async () => {
    const result = await runF2Trials({ trials: 100, seed: 42 });
    expect(result.failures).toEqual([]);
    expect(result.violations).toEqual([]);
    // The conflicts really happened, and were absorbed by re-reading and re-planning.
    expect(result.conflicts).toBeGreaterThan(100);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  }, 180_000);

  // The same failure on argoproj.io Rollouts (controller mode): fewer trials, since the planner and the
  // replica arithmetic are shared and what differs is the group every read and write goes to.
  it('converges in every one of 20 trials on argoproj.io Rollouts', async () => {
    const result = await runF2Trials({ trials: 20, seed: 43, api: ARGO_API });
    expect(result.failures).toEqual([]);
    expect(result.violations).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(20);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  }, 120_000);
});
