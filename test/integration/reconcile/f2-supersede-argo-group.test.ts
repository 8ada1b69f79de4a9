// F2 on argoproj.io Rollouts (controller mode): 20 randomized trials converge. A file of its own beside
// f2-supersede-under-conflicts.test.ts, so the two CPU-bound runs can take a fork each.
import { describe, expect, it } from 'vitest';
import { ARGO_API } from '../../../src/manifest/driven-api.ts';
import { MAX_RECONCILES_PER_TRIAL, runF2Trials } from './f2-trials.ts';

describe('F2: new revisions mid-canary under conflicts, argoproj.io group', () => {
  // Fewer trials than in rollgate.dev: the planner and the replica arithmetic are shared, and what
  // differs is the group every read and write goes to.
  it('converges in every one of 20 trials on argoproj.io Rollouts', async () => {
    const result = await runF2Trials({ trials: 20, seed: 43, api: ARGO_API });
    expect(result.failures).toEqual([]);
    expect(result.violations).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(20);
    expect(result.maxReconciles).toBeLessThan(MAX_RECONCILES_PER_TRIAL);
  }, 120_000);
});
