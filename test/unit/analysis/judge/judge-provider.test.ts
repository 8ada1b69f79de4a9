// The judge metric through the run executor (scripted series providers) and through `rollgate validate`.
import { describe, expect, it } from 'vitest';
import { reconcileAnalysisRun } from '../../../../src/analysis/run-executor.ts';
import { createJudgeProvider } from '../../../../src/analysis/providers/judge-provider.ts';
import {
  createMetricProviderRegistry,
  type MetricProvider,
} from '../../../../src/analysis/providers/metric-provider.ts';
import { MetricProviderError } from '../../../../src/analysis/providers/metric-provider-error.ts';
import type { AnalysisRun, Metric } from '../../../../src/manifest/analysis.ts';
import { validateManifests } from '../../../../src/manifest/validate.ts';

const NOW = new Date('2026-12-04T12:00:00Z');

/** A prometheus stand-in answering each query from a table (a value or an error). */
function prometheusAnswering(answers: Record<string, unknown>): MetricProvider & { seen: Date[] } {
  const seen: Date[] = [];
  return {
    type: 'prometheus',
    seen,
    measure(metric, _run, ctx) {
      seen.push(ctx.now);
      const answer = answers[metric.provider.prometheus?.query ?? ''];
      if (answer instanceof Error) return Promise.reject(answer);
      return Promise.resolve({ value: answer, raw: JSON.stringify(answer) });
    },
  };
}

const spread = (n: number, center: number): number[] =>
  Array.from({ length: n }, (_, i) => center * (0.8 + (0.4 * i) / (n - 1)));

function judgeMetric(judge: Partial<NonNullable<Metric['provider']['judge']>> = {}): Metric {
  return {
    name: 'latency',
    provider: {
      judge: {
        canary: { prometheus: { address: 'http://prom', query: 'canary' } },
        stable: { prometheus: { address: 'http://prom', query: 'stable' } },
        tolerance: 0.05,
        ...judge,
      },
    },
  };
}

function aRun(metric: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'web-1', namespace: 'shop' },
    spec: { metrics: [metric] },
  };
}

async function measureOnce(answers: Record<string, unknown>, metric = judgeMetric()) {
  const series = prometheusAnswering(answers);
  const providers = createMetricProviderRegistry([
    series,
    createJudgeProvider(createMetricProviderRegistry([series])),
  ]);
  const outcome = await reconcileAnalysisRun(aRun(metric), { providers, now: NOW });
  const result = outcome.status.metricResults?.[0];
  return { phase: outcome.status.phase, result, measurement: result?.measurements?.at(-1), series };
}

describe('the judge provider in a run', () => {
  it('passes equal samples: the run is Successful and stores both sides’ numbers', async () => {
    const { phase, measurement, series } = await measureOnce({
      canary: spread(40, 100),
      stable: spread(40, 100),
    });
    expect(phase).toBe('Successful');
    expect(measurement?.phase).toBe('Successful');
    expect(JSON.parse(measurement?.value ?? '')).toMatchObject({
      verdict: 'pass',
      canary: { n: 40, median: 100 },
      stable: { n: 40, median: 100 },
      pValue: 1,
      shift: 0,
    });
    expect(measurement?.message).toMatch(/^no significant difference: /);
    // One window: both sides asked at the same instant.
    expect(series.seen).toEqual([NOW, NOW]);
  });

  it('fails a canary 30 % slower: the run is Failed with the reason', async () => {
    const { phase, result, measurement } = await measureOnce({
      canary: spread(40, 130),
      stable: spread(40, 100),
    });
    expect(measurement?.phase).toBe('Failed');
    expect(measurement?.message).toMatch(
      /^canary median 130 is 30\.0 % above stable 100 \(Mann-Whitney p = /,
    );
    expect(phase).toBe('Failed');
    expect(result?.failed).toBe(1);
  });

  it('is Inconclusive with too few points, which the planner counts against inconclusiveLimit', async () => {
    const { phase, result, measurement } = await measureOnce({
      canary: spread(5, 200),
      stable: spread(5, 100),
    });
    expect(measurement?.phase).toBe('Inconclusive');
    expect(measurement?.message).toBe('not enough data: canary 5, stable 5 points (minSamples 20)');
    expect(result?.inconclusive).toBe(1);
    expect(phase).toBe('Inconclusive');
  });

  it('takes a scalar or an empty vector as points (an empty side is not enough data)', async () => {
    const { measurement } = await measureOnce({ canary: [], stable: 3 });
    expect(measurement?.message).toBe('not enough data: canary 0, stable 1 points (minSamples 20)');
  });

  it('makes a side that cannot be read an Error naming the side, keeping a 429 delay', async () => {
    const limited = new MetricProviderError('prometheus', 'HTTP 429: slow down', 'latency', 30_000);
    const { measurement, result } = await measureOnce({ canary: spread(40, 100), stable: limited });
    expect(measurement?.phase).toBe('Error');
    expect(measurement?.message).toBe(
      'judge metric "latency": stable: prometheus metric "latency": HTTP 429: slow down',
    );
    expect(measurement?.resumeAt).toBe(new Date(NOW.getTime() + 30_000).toISOString());
    expect(result?.consecutiveError).toBe(1);
  });

  it('makes an answer that is not numbers an Error', async () => {
    const { measurement } = await measureOnce({ canary: { status: 'ok' }, stable: spread(40, 100) });
    expect(measurement?.phase).toBe('Error');
    expect(measurement?.message).toMatch(/canary: the query answered an object; the judge needs numbers/);
  });

  it('makes a tolerance from an argument that is no number an Error', async () => {
    const { measurement } = await measureOnce(
      { canary: spread(40, 100), stable: spread(40, 100) },
      judgeMetric({ tolerance: 'five' }),
    );
    expect(measurement?.message).toBe('judge metric "latency": judge.tolerance must be a number, got "five"');
  });
});

const HEAD = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: latency
spec:
  args: [{ name: canary-hash }, { name: stable-hash }, { name: tolerance, value: "0.1" }]
  metrics:
    - name: latency
      interval: 1m
      count: 5
      provider:
        judge:
`;

const PROM = (side: string) =>
  `          ${side}:\n            prometheus:\n              address: http://prometheus:9090\n              query: 'latency_ms{rollouts_pod_template_hash="{{args.${side}-hash}}"}'\n`;

function validate(text: string): string[] {
  const report = validateManifests([{ file: 'judge.yaml', text }]);
  return report.objects.flatMap((o) => o.errors.map((e) => `${o.file}:${e.line} ${e.path}: ${e.message}`));
}

describe('rollgate validate on judge metrics', () => {
  it('accepts a complete judge (numbers from args included)', () => {
    expect(
      validate(
        `${HEAD}${PROM('canary')}${PROM('stable')}          direction: increase\n          tolerance: "{{args.tolerance}}"\n          minSamples: 30\n`,
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'a side without provider',
      `${PROM('canary')}          stable: {}\n`,
      /judge\.yaml:\d+ spec\.metrics\[0\]\.provider\.judge\.stable: must set one provider/,
    ],
    [
      'sides on two providers',
      `${PROM('canary')}          stable:\n            graphite: { address: http://g, query: target=x }\n`,
      /provider\.judge\.stable: must use the canary's provider \(prometheus\), got graphite/,
    ],
    [
      'a confidence of 95',
      `${PROM('canary')}${PROM('stable')}          confidence: 95\n`,
      /provider\.judge\.confidence: must be between 0 and 1/,
    ],
    [
      'a tolerance that is no number',
      `${PROM('canary')}${PROM('stable')}          tolerance: true\n`,
      /provider\.judge\.tolerance: must be a number, got true/,
    ],
    [
      'a negative tolerance',
      `${PROM('canary')}${PROM('stable')}          tolerance: -0.1\n`,
      /provider\.judge\.tolerance: must be 0 or more/,
    ],
    [
      'minSamples 1',
      `${PROM('canary')}${PROM('stable')}          minSamples: 1\n`,
      /provider\.judge\.minSamples: must be a whole number of 2 or more/,
    ],
    [
      'an unknown direction',
      `${PROM('canary')}${PROM('stable')}          direction: up\n`,
      /provider\.judge\.direction/,
    ],
    [
      "a side's own provider check",
      `${PROM('canary')}          stable:\n            prometheus:\n              query: q\n              rangeQuery: { start: 'now()', end: 'now()', step: 0s }\n`,
      /provider\.judge\.stable\.prometheus\.rangeQuery\.step: must be more than 0/,
    ],
  ])('refuses %s at its line', (_name, body, want) => {
    const errors = validate(`${HEAD}${body}`);
    expect(errors.join('\n')).toMatch(want);
  });

  it('refuses conditions on a judge metric, which it would ignore', () => {
    const text = `${HEAD}${PROM('canary')}${PROM('stable')}`.replace(
      '      interval: 1m\n',
      '      interval: 1m\n      successCondition: result > 0\n',
    );
    expect(validate(text)).toEqual([
      'judge.yaml:10 spec.metrics[0].successCondition: is not used by a judge metric (the judge decides): remove it',
    ]);
  });
});
