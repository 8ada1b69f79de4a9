import { describe, expect, it } from 'vitest';
import type { ObservedAnalysisRun } from '../../../src/rollout/observed-state.ts';
import { planRunHistory } from '../../../src/rollout/plan-run-history.ts';

const run = (
  name: string,
  hash: string,
  phase: ObservedAnalysisRun['phase'],
  minute: number,
): ObservedAnalysisRun => ({
  name,
  phase,
  labels: { 'rollouts-pod-template-hash': hash },
  terminated: phase !== 'Running' && phase !== 'Pending',
  creationTimestamp: `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z`,
});

const deleted = (actions: ReturnType<typeof planRunHistory>): string[] =>
  actions.map((a) => (a.kind === 'deleteAnalysisRun' ? a.name : `unexpected ${a.kind}`));

describe('planRunHistory', () => {
  const history = [
    run('a-1', 'h1', 'Successful', 1),
    run('a-2', 'h2', 'Successful', 2),
    run('a-3', 'h3', 'Failed', 3),
    run('a-4', 'h4', 'Error', 4),
    run('a-5', 'h5', 'Successful', 5),
    run('cur', 'now', 'Inconclusive', 9),
  ];

  it('keeps the newest runs within each limit and deletes the oldest beyond it', () => {
    const spec = { analysis: { successfulRunHistoryLimit: 1, unsuccessfulRunHistoryLimit: 1 } };
    expect(deleted(planRunHistory(spec, history, 'now'))).toEqual(['a-2', 'a-1', 'a-3']);
  });

  it('never collects a run of the current revision, however many there are (F4 keeps its run)', () => {
    const spec = { analysis: { successfulRunHistoryLimit: 0, unsuccessfulRunHistoryLimit: 0 } };
    expect(deleted(planRunHistory(spec, history, 'now'))).not.toContain('cur');
    expect(deleted(planRunHistory(spec, history, 'now'))).toHaveLength(5);
  });

  it("uses Argo's default of 5 per kind and never deletes a run still running", () => {
    expect(planRunHistory({}, history, 'now')).toEqual([]);
    expect(
      deleted(
        planRunHistory(
          { analysis: { successfulRunHistoryLimit: 0 } },
          [run('r', 'old', 'Running', 1)],
          'now',
        ),
      ),
    ).toEqual([]);
  });
});
