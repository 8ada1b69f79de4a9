// Reconcile job keys and payloads: a Rollout, a standalone AnalysisRun and an Experiment of one name are three jobs.
import { describe, expect, it } from 'vitest';
import { parseJobPayload, parseReconcileJobKey, reconcileJobKey } from '../../../src/queue/job-payloads.ts';

describe('reconcile job keys', () => {
  it('a Rollout keeps its namespace/name key; a standalone run gets a key no Rollout can have', () => {
    expect(reconcileJobKey({ namespace: 'shop', name: 'web' })).toBe('shop/web');
    expect(reconcileJobKey({ kind: 'analysisRun', namespace: 'shop', name: 'web' })).toBe(
      'shop/analysisruns/web',
    );
    expect(parseReconcileJobKey('shop/web')).toEqual({ v: 1, namespace: 'shop', name: 'web' });
    expect(parseReconcileJobKey('shop/analysisruns/web')).toEqual({
      v: 1,
      kind: 'analysisRun',
      namespace: 'shop',
      name: 'web',
    });
    expect(reconcileJobKey({ kind: 'experiment', namespace: 'shop', name: 'web' })).toBe(
      'shop/experiments/web',
    );
    expect(parseReconcileJobKey('shop/experiments/web')).toEqual({
      v: 1,
      kind: 'experiment',
      namespace: 'shop',
      name: 'web',
    });
    expect(() => parseReconcileJobKey('shop/other/web')).toThrow(RangeError);
  });

  it('validates the three payload kinds at the queue boundary, and refuses an unknown kind', () => {
    expect(parseJobPayload('reconcile', { v: 1, namespace: 'a', name: 'b' })).toEqual({
      v: 1,
      namespace: 'a',
      name: 'b',
    });
    expect(parseJobPayload('reconcile', { v: 1, kind: 'analysisRun', namespace: 'a', name: 'b' })).toEqual({
      v: 1,
      kind: 'analysisRun',
      namespace: 'a',
      name: 'b',
    });
    expect(parseJobPayload('reconcile', { v: 1, kind: 'experiment', namespace: 'a', name: 'b' })).toEqual({
      v: 1,
      kind: 'experiment',
      namespace: 'a',
      name: 'b',
    });
    expect(() =>
      parseJobPayload('reconcile', { v: 1, kind: 'deployment', namespace: 'a', name: 'b' }),
    ).toThrow(/invalid payload/);
    expect(() =>
      parseJobPayload('reconcile', { v: 1, kind: 'analysisRun', namespace: 'A_B', name: 'b' }),
    ).toThrow(/namespace/);
  });
});
