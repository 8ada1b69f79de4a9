// What `rollgate status` shows of a rollout's AnalysisRuns: metrics, counters, last measurements.
import { describe, expect, it } from 'vitest';
import { buildAnalysisRunView, formatAnalysisRunViews } from '../../../src/views/analysis-run-view.ts';

const run = {
  metadata: {
    name: 'web-abc-background',
    labels: { 'rollgate.dev/analysis-type': 'Background' },
  },
  spec: {
    metrics: [{ name: 'success-rate', successCondition: 'result[0] >= 0.95' }, { name: 'latency' }],
  },
  status: {
    phase: 'Inconclusive',
    message: 'metric success-rate is inconclusive',
    metricResults: [
      {
        name: 'success-rate',
        phase: 'Inconclusive',
        count: 4,
        successful: 3,
        inconclusive: 1,
        measurements: [
          { phase: 'Successful', value: '[0.99]', finishedAt: '2026-01-01T00:00:00Z' },
          { phase: 'Successful', value: '[0.98]', finishedAt: '2026-01-01T00:00:10Z' },
          { phase: 'Successful', value: '[0.97]', finishedAt: '2026-01-01T00:00:20Z' },
          { phase: 'Inconclusive', value: '[0.7]', finishedAt: '2026-01-01T00:00:30Z' },
        ],
      },
    ],
  },
};

describe('buildAnalysisRunView', () => {
  it('keeps the last three measurements per metric and shows metrics not measured yet as Pending', () => {
    const view = buildAnalysisRunView(run);
    expect(view.phase).toBe('Inconclusive');
    expect(view.type).toBe('Background');
    expect(view.metrics.map((m) => [m.name, m.phase, m.count])).toEqual([
      ['success-rate', 'Inconclusive', 4],
      ['latency', 'Pending', 0],
    ]);
    expect(view.metrics[0]?.lastMeasurements.map((m) => m.value)).toEqual(['[0.98]', '[0.97]', '[0.7]']);
  });

  it('keeps as many measurements as asked, each with its number, and the condition that judged them', () => {
    const view = buildAnalysisRunView(run, 60);
    const [rate, latency] = view.metrics;
    expect(rate?.lastMeasurements.map((m) => m.number)).toEqual([0.99, 0.98, 0.97, 0.7]);
    expect(rate?.successCondition).toBe('result[0] >= 0.95');
    expect(rate?.failureCondition).toBeUndefined();
    expect(latency?.successCondition).toBeUndefined();
  });

  it('shows a run with an unreadable status as Unknown instead of failing', () => {
    const view = buildAnalysisRunView({ metadata: { name: 'x' }, status: { phase: 'Exploded' } });
    expect(view.phase).toBe('Unknown');
    expect(view.metrics).toEqual([]);
  });
});

describe('formatAnalysisRunViews', () => {
  it('prints each run, its metrics with counters, and their last measurements', () => {
    const text = formatAnalysisRunViews([buildAnalysisRunView(run)]).join('\n');
    expect(text).toContain(
      'web-abc-background (background)  Inconclusive: metric success-rate is inconclusive',
    );
    expect(text).toContain('success-rate  Inconclusive  (count 4, ok 3, failed 0, inconclusive 1, error 0)');
    expect(text).toContain('2026-01-01T00:00:30Z  Inconclusive [0.7]');
    expect(text).not.toContain('[0.99]');
  });

  it('prints nothing without runs', () => {
    expect(formatAnalysisRunViews([])).toEqual([]);
  });
});
