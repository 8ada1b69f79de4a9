// The pure parts of the Datadog and Graphite providers and the 429 rule: answers mapped as Argo maps them, the wait a 429 asks for.
import { describe, expect, it } from 'vitest';
import { mapDatadogV1, mapDatadogV2 } from '../../../src/analysis/providers/datadog-provider.ts';
import { mapGraphiteRender } from '../../../src/analysis/providers/graphite-provider.ts';
import { rateLimitDelayMs } from '../../../src/analysis/providers/rate-limit.ts';
import { planAnalysisRun } from '../../../src/analysis/plan-analysis-run.ts';
import type { AnalysisRun } from '../../../src/manifest/analysis.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));

describe('Datadog answers', () => {
  it('v1: the last point of the first series; none is nil; status error is an error with its text', () => {
    expect(
      mapDatadogV1({
        series: [
          {
            pointlist: [
              [1, 0.5],
              [2, 0.25],
            ],
          },
          { pointlist: [[2, 9]] },
        ],
      }),
    ).toEqual({
      value: 0.25,
      raw: '0.25',
    });
    expect(mapDatadogV1({ status: 'ok', series: [] })).toEqual({ value: null, raw: '[]' });
    expect(() => mapDatadogV1({ status: 'error', error: 'Rule scope_expr did not match' })).toThrow(
      'query failed: Rule scope_expr did not match',
    );
  });

  it('v2 grouped (`by {tag}`): a list, one value per group with data, and the groups named in metadata', () => {
    const answer = mapDatadogV2({
      data: {
        attributes: {
          columns: [
            { name: 'env', type: 'group', values: [['prod'], ['prod'], ['staging']] },
            { name: 'resource_name', type: 'group', values: [['GET /a'], ['GET /b'], ['GET /a']] },
            { name: 'query', type: 'number', values: [0.01, null, 0.2] },
          ],
        },
      },
    });
    expect(answer.value).toEqual([0.01, 0.2]);
    expect(JSON.parse(answer.metadata?.['groups'] ?? '')).toEqual([
      { name: 'prod,GET /a', value: 0.01 },
      { name: 'staging,GET /a', value: 0.2 },
    ]);
  });

  it('v2 grouped over more than 100 groups: metadata keeps the lowest and highest 50, the value keeps all', () => {
    const n = 150;
    const answer = mapDatadogV2({
      data: {
        attributes: {
          columns: [
            { type: 'group', values: Array.from({ length: n }, (_, i) => [`g${i}`]) },
            { type: 'number', values: Array.from({ length: n }, (_, i) => i) },
          ],
        },
      },
    });
    expect((answer.value as number[]).length).toBe(n);
    const shown = JSON.parse(answer.metadata?.['groups'] ?? '[]') as Array<{ value: number }>;
    expect(shown.map((g) => g.value)).toEqual([
      ...Array.from({ length: 50 }, (_, i) => i),
      ...Array.from({ length: 50 }, (_, i) => 100 + i),
    ]);
    expect(answer.metadata?.['groups_truncated']).toBe('true');
  });

  it("v2: an `errors` text is Datadog's message; an ungrouped empty column is nil", () => {
    expect(() => mapDatadogV2({ errors: 'invalid formula' })).toThrow('query failed: invalid formula');
    expect(mapDatadogV2({ data: { attributes: { columns: [{ type: 'number', values: [] }] } } })).toEqual({
      value: null,
      raw: '[]',
    });
  });
});

describe('Graphite answers', () => {
  it("the first target's values without nulls, six decimals; no target is an error", () => {
    expect(
      mapGraphiteRender([
        {
          target: 'a',
          datapoints: [
            [null, 1],
            [90, 2],
            ['88.5', 3],
          ],
        },
        { datapoints: [[1, 1]] },
      ]),
    ).toEqual({
      value: [90, 88.5],
      raw: '[90.000000,88.500000]',
    });
    expect(() => mapGraphiteRender([])).toThrow('no values found');
  });
});

describe('the wait a 429 asks for', () => {
  it.each([
    [{ 'retry-after': '25' }, 25_000],
    [{ 'retry-after': new Date(NOW.getTime() + 90_000).toUTCString() }, 90_000],
    [{ 'x-ratelimit-reset': '42' }, 42_000],
    [{}, 30_000],
    [{ 'retry-after': '0' }, 1_000],
    [{ 'retry-after': '86400' }, 600_000],
  ])('%j → %d ms', (headers, ms) => {
    expect(rateLimitDelayMs(headers, NOW)).toBe(ms);
  });
});

describe('an Error measurement with resumeAt (a 429) is not due before it', () => {
  const run = (resumeAt?: string): AnalysisRun => ({
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'n' },
    spec: { metrics: [{ name: 'm', interval: '10s', provider: { web: { url: 'http://x' } } }] },
    status: {
      phase: 'Running',
      startedAt: NOW.toISOString(),
      metricResults: [
        {
          name: 'm',
          phase: 'Running',
          error: 1,
          consecutiveError: 1,
          measurements: [
            {
              phase: 'Error',
              startedAt: NOW.toISOString(),
              finishedAt: NOW.toISOString(),
              ...(resumeAt && { resumeAt }),
            },
          ],
        },
      ],
    },
  });
  it('without it: the usual min(interval, 10 s); with it: at resumeAt', () => {
    expect(planAnalysisRun(run(), NOW).requeueAfterMs).toBe(10_000);
    expect(planAnalysisRun(run(new Date(NOW.getTime() + 42_000).toISOString()), NOW).requeueAfterMs).toBe(
      42_000,
    );
    // A resumeAt sooner than the usual retry changes nothing.
    expect(planAnalysisRun(run(new Date(NOW.getTime() + 1_000).toISOString()), NOW).requeueAfterMs).toBe(
      10_000,
    );
  });
});
