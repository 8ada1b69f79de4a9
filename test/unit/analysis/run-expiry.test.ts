// AnalysisRun ttlStrategy: which TTL a finished run gets (Argo's order) and when it is deleted.
import { describe, expect, it } from 'vitest';
import { planRunExpiry, type ExpiringRun } from '../../../src/analysis/run-expiry.ts';
import type { AnalysisPhase, TtlStrategy } from '../../../src/manifest/analysis.ts';
import { isStandaloneRunToMeasure } from '../../../src/reconciler/reconcile-standalone-run.ts';

const ENDED = '2026-01-01T00:00:00Z';
const at = (seconds: number): Date => new Date(Date.parse(ENDED) + seconds * 1000);

function run(
  phase: AnalysisPhase | undefined,
  ttlStrategy?: TtlStrategy,
  completedAt: string | null = ENDED,
): ExpiringRun {
  return {
    metadata: { name: 'smoke' },
    spec: ttlStrategy === undefined ? {} : { ttlStrategy },
    status: { ...(phase !== undefined && { phase }), ...(completedAt !== null && { completedAt }) },
  };
}

const ALL: TtlStrategy = { secondsAfterCompletion: 30, secondsAfterSuccess: 10, secondsAfterFailure: 20 };
const DELETE = { actions: [{ kind: 'deleteAnalysisRun', name: 'smoke' }] };

describe('planRunExpiry', () => {
  const rows: Array<{ name: string; run: ExpiringRun; now: Date; want: object }> = [
    {
      name: 'Successful: secondsAfterSuccess, not yet due → look again then',
      run: run('Successful', ALL),
      now: at(4),
      want: { actions: [], requeueAfterMs: 6_000 },
    },
    { name: 'Successful: due → deleted', run: run('Successful', ALL), now: at(10), want: DELETE },
    {
      name: 'Failed: secondsAfterFailure',
      run: run('Failed', ALL),
      now: at(15),
      want: { actions: [], requeueAfterMs: 5_000 },
    },
    {
      name: 'Error: secondsAfterCompletion (no TTL of its own)',
      run: run('Error', ALL),
      now: at(25),
      want: { actions: [], requeueAfterMs: 5_000 },
    },
    {
      name: 'Inconclusive: secondsAfterCompletion',
      run: run('Inconclusive', ALL),
      now: at(31),
      want: DELETE,
    },
    {
      name: 'Successful without secondsAfterSuccess falls back to secondsAfterCompletion',
      run: run('Successful', { secondsAfterCompletion: 30 }),
      now: at(10),
      want: { actions: [], requeueAfterMs: 20_000 },
    },
    {
      name: 'Failed with only secondsAfterSuccess: kept (no TTL applies)',
      run: run('Failed', { secondsAfterSuccess: 1 }),
      now: at(99),
      want: { actions: [] },
    },
    {
      name: '0 seconds: deleted as soon as it ends',
      run: run('Successful', { secondsAfterCompletion: 0 }),
      now: at(0),
      want: DELETE,
    },
    {
      name: 'running: kept, no look scheduled',
      run: run('Running', ALL, null),
      now: at(99),
      want: { actions: [] },
    },
    { name: 'no ttlStrategy: kept', run: run('Successful'), now: at(99), want: { actions: [] } },
    {
      name: 'finished without completedAt: kept (its end is unknown)',
      run: run('Successful', ALL, null),
      now: at(99),
      want: { actions: [] },
    },
  ];
  for (const row of rows) it(row.name, () => expect(planRunExpiry(row.run, row.now)).toEqual(row.want));
});

describe('which standalone runs get a job', () => {
  it('a finished run with a ttlStrategy still does (to be deleted); one without does not', () => {
    expect(isStandaloneRunToMeasure({ status: { phase: 'Successful' } })).toBe(false);
    expect(
      isStandaloneRunToMeasure({
        spec: { ttlStrategy: { secondsAfterCompletion: 5 } },
        status: { phase: 'Successful' },
      }),
    ).toBe(true);
    expect(
      isStandaloneRunToMeasure({
        metadata: { deletionTimestamp: ENDED },
        spec: { ttlStrategy: {} },
        status: { phase: 'Failed' },
      }),
    ).toBe(false);
  });
});
