// Backtesting: past runs made by the live executor, replayed under the same and a stricter template.
import { describe, expect, it } from 'vitest';
import { buildAnalysisRun } from '../../../../src/analysis/build-analysis-run.ts';
import { reconcileAnalysisRun } from '../../../../src/analysis/run-executor.ts';
import { createMetricProviderRegistry } from '../../../../src/analysis/providers/metric-provider.ts';
import { recordedValue } from '../../../../src/analysis/replay/recorded-value.ts';
import { replayPastRun, selectPastRuns } from '../../../../src/analysis/replay/replay-past-runs.ts';
import { ANALYSIS_TEMPLATES_ANNOTATION } from '../../../../src/analysis/run-template-annotation.ts';
import type { AnalysisRun, AnalysisTemplate } from '../../../../src/manifest/analysis.ts';

function template(successCondition: string, extra: Record<string, unknown> = {}): AnalysisTemplate {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisTemplate',
    metadata: { name: 'success-rate' },
    spec: {
      args: [{ name: 'service' }],
      metrics: [
        {
          name: 'success-rate',
          interval: '1m',
          count: 3,
          successCondition,
          provider: { prometheus: { address: 'http://prom', query: 'rate{service="{{args.service}}"}' } },
          ...extra,
        },
      ],
    },
  };
}

/** Runs `tpl` live (the real executor, a scripted Prometheus) from `start`, one pass per due measurement. */
async function pastRun(name: string, values: number[], start: string, tpl = template('result[0] >= 0.9')) {
  let answered = 0;
  const providers = createMetricProviderRegistry([
    {
      type: 'prometheus',
      measure: () => {
        const value = [values[Math.min(answered++, values.length - 1)]];
        return Promise.resolve({ value, raw: JSON.stringify(value) });
      },
    },
  ]);
  let run: AnalysisRun = buildAnalysisRun([tpl], [{ name: 'service', value: 'web' }], {
    name,
    namespace: 'shop',
    labels: { 'rollgate.dev/rollout': 'web', 'rollouts-pod-template-hash': name.split('-')[1] ?? '' },
    annotations: { [ANALYSIS_TEMPLATES_ANNOTATION]: 'AnalysisTemplate/success-rate' },
  });
  let now = new Date(start);
  for (let i = 0; i < 20; i++) {
    const outcome = await reconcileAnalysisRun(run, { providers, now });
    run = { ...run, status: outcome.status };
    if (outcome.requeueAfterMs === undefined) break;
    // The live worker wakes a little after the due time.
    now = new Date(now.getTime() + outcome.requeueAfterMs + 1_500);
  }
  return run;
}

describe('replayPastRun', () => {
  it('replaying the template a run was made with gives the recorded verdicts', async () => {
    for (const values of [
      [0.99, 0.98, 0.97],
      [0.99, 0.5, 0.99],
    ]) {
      const past = await pastRun('web-abc-2-1', values, '2026-12-01T10:00:00Z');
      const replayed = await replayPastRun(template('result[0] >= 0.9'), past);
      expect(replayed.replay?.phase).toBe(past.status?.phase);
    }
  });

  it('names the run a stricter template would have failed, with its measurement', async () => {
    const past = await pastRun('web-6b9d-2-1', [0.99, 0.93, 0.97], '2026-12-01T10:00:00Z');
    expect(past.status?.phase).toBe('Successful');
    const second = past.status?.metricResults?.[0]?.measurements?.[1];
    const replayed = await replayPastRun(template('result[0] >= 0.95'), past);
    expect(replayed).toMatchObject({
      run: 'web-6b9d-2-1',
      rollout: 'web',
      revision: '2',
      recorded: { phase: 'Successful' },
      replay: {
        phase: 'Failed',
        terminated: false,
        deciding: {
          metric: 'success-rate',
          index: 2,
          time: second?.finishedAt,
          value: '[0.93]',
          phase: 'Failed',
        },
      },
    });
    expect(replayed.replay?.message).toBe(
      'Metric "success-rate" assessed Failed due to failed (1) > failureLimit (0)',
    );
  });

  it('ends a replay where the recording ends (a run the rollout terminated early)', async () => {
    const past = await pastRun(
      'web-aaa-3-1',
      [0.99],
      '2026-12-01T10:00:00Z',
      template('result[0] >= 0.9', { count: 1 }),
    );
    const replayed = await replayPastRun(template('result[0] >= 0.9'), past);
    expect(replayed.replay).toMatchObject({ phase: 'Successful', terminated: true, deciding: { index: 1 } });
    expect(replayed.replay?.message).toBe('Run Terminated');
  });

  it('reports a template that cannot be built for a run (an argument the run never had)', async () => {
    const past = await pastRun('web-bbb-4-1', [0.99], '2026-12-01T10:00:00Z');
    const tpl = template('result[0] >= 0.9');
    tpl.spec.args = [{ name: 'service' }, { name: 'threshold' }];
    const replayed = await replayPastRun(tpl, past);
    expect(replayed.error).toMatch(/threshold/);
  });

  it('notes measurements that measurementRetention did not keep, and numbers from the first kept', async () => {
    const values = Array.from({ length: 12 }, (_, i) => (i === 11 ? 0.5 : 0.99));
    const past = await pastRun(
      'web-ccc-5-1',
      values,
      '2026-12-01T10:00:00Z',
      template('result[0] >= 0.9', { count: 12 }),
    );
    const replayed = await replayPastRun(template('result[0] >= 0.9', { count: 12 }), past);
    expect(replayed.replay?.notes).toEqual([
      'metric "success-rate": measurements 1–2 were not kept (measurementRetention), replay starts at 3',
    ]);
    expect(replayed.replay?.deciding).toMatchObject({ index: 12, value: '[0.5]', phase: 'Failed' });
  });
});

describe('selectPastRuns', () => {
  it('keeps the runs of the template, newest first, at most N', async () => {
    const runs = await Promise.all([
      pastRun('web-a-1-1', [0.99], '2026-12-01T10:00:00Z'),
      pastRun('web-b-2-1', [0.99], '2026-12-02T10:00:00Z'),
      pastRun('web-c-3-1', [0.99], '2026-12-03T10:00:00Z'),
    ]);
    const other = {
      ...runs[0],
      metadata: {
        ...runs[0]!.metadata,
        name: 'other',
        annotations: { [ANALYSIS_TEMPLATES_ANNOTATION]: 'AnalysisTemplate/latency' },
      },
    } as AnalysisRun;
    const legacy = { ...runs[0], metadata: { name: 'legacy', namespace: 'shop' } } as AnalysisRun;
    const picked = selectPastRuns([...runs, other, legacy], 'success-rate', ['success-rate'], 3);
    expect(picked.map((r) => r.metadata.name)).toEqual(['web-c-3-1', 'web-b-2-1', 'web-a-1-1']);
    expect(
      selectPastRuns([...runs, legacy], 'success-rate', ['success-rate'], 10).map((r) => r.metadata.name),
    ).toContain('legacy');
  });
});

describe('recordedValue', () => {
  it.each<[string, unknown]>([
    ['[0.99,0.97]', [0.99, 0.97]],
    ['[0.5,NaN,+Inf,-Inf]', [0.5, NaN, Infinity, -Infinity]],
    ['0.25', 0.25],
    ['NaN', NaN],
    ['{"successRate":0.99}', { successRate: 0.99 }],
    ['healthy', 'healthy'],
    ['[]', []],
  ])('%s', (text, want) => {
    expect(recordedValue(text)).toEqual(want);
  });

  it('refuses a value the executor cut', () => {
    expect(() => recordedValue('[1,2,3… (900 more characters)')).toThrow(/cut at 256/);
  });
});
