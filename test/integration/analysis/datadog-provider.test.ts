// The Datadog provider against a double that checks each request against Datadog's published API and answers from written points.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDatadogProvider } from '../../../src/analysis/providers/datadog-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, DatadogMetric, Metric } from '../../../src/manifest/analysis.ts';
import { startDatadogDouble, type DatadogDouble } from '../../support/datadog-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const MINUTE = 60_000;

let dd: DatadogDouble;
beforeAll(async () => {
  dd = await startDatadogDouble();
});
afterAll(async () => {
  await dd?.stop();
});
afterEach(() => {
  dd.fault = undefined;
  expect(dd.violations).toEqual([]);
});

function keys(address = dd.address) {
  return { 'api-key': dd.apiKey, 'app-key': dd.appKey, address };
}

function provider(secrets: Record<string, Record<string, string>> = { datadog: keys() }, env = {}) {
  return createDatadogProvider({ secrets: staticProviderSecrets(secrets), env });
}

function metric(datadog: DatadogMetric, fields: Partial<Metric> = {}): Metric {
  return { name: 'error-rate', provider: { datadog }, ...fields };
}

function aRun(m: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'shop', uid: 'u' },
    spec: { metrics: [m] },
  };
}

const ctx = { now: NOW, logger: silentLogger };

describe('datadog provider: queries and answers', () => {
  it('v1: GETs the last `interval` in seconds and takes the last point in it', async () => {
    dd.write('sum:errors{service:shop}', [
      [NOW.getTime() - 10 * MINUTE, 0.9], // before the window: never seen
      [NOW.getTime() - 4 * MINUTE, 0.02],
      [NOW.getTime() - MINUTE, 0.01],
    ]);
    const m = metric({ query: 'sum:errors{service:shop}', interval: '5m' });
    const answer = await provider().measure(m, aRun(m), ctx);
    expect(answer).toMatchObject({ value: 0.01, raw: '0.01' });
    const request = dd.requests.at(-1);
    expect(request?.path).toBe('/api/v1/query');
    expect(request?.params.get('to')).toBe(String(NOW.getTime() / 1000));
    expect(request?.params.get('from')).toBe(String(NOW.getTime() / 1000 - 300));
  });

  it('v2: queries with an aggregator and a formula, one scalar', async () => {
    const at = (m: number) => NOW.getTime() - m * MINUTE;
    dd.write('count:requests.errors{service:shop}.as_count()', [
      [at(4), 1],
      [at(3), 9],
      [at(2), 3],
      [at(1), 7],
      [at(0), 5],
    ]);
    dd.write('count:requests{service:shop}.as_count()', [
      [at(4), 100],
      [at(2), 150],
      [at(0), 250],
    ]);
    const m = metric({
      apiVersion: 'v2',
      interval: '5m',
      aggregator: 'sum',
      queries: {
        a: 'count:requests.errors{service:shop}.as_count()',
        b: 'count:requests{service:shop}.as_count()',
      },
      formula: 'a / b * 100',
    });
    const answer = await provider().measure(m, aRun(m), ctx);
    expect(answer.value).toBe(5); // 25 errors of 500 requests
    const body = dd.requests.at(-1)?.body as { data: { attributes: Record<string, unknown> } };
    expect(body.data.attributes['from']).toBe(NOW.getTime() - 5 * MINUTE);
    expect(body.data.attributes['formulas']).toEqual([{ formula: 'a / b * 100' }]);
  });

  it('v2 with a single query and the default aggregator (last)', async () => {
    dd.write('max:kubernetes.containers.restarts{service:shop}', [
      [NOW.getTime() - 3 * MINUTE, 1],
      [NOW.getTime() - MINUTE, 6],
    ]);
    const m = metric({ apiVersion: 'v2', query: 'max:kubernetes.containers.restarts{service:shop}' });
    expect((await provider().measure(m, aRun(m), ctx)).value).toBe(6);
  });

  it('no data is nil, which default() turns into a number (as Argo documents)', async () => {
    for (const apiVersion of ['v1', 'v2'] as const) {
      const m = metric(
        { apiVersion, query: 'sum:nothing.here{*}' },
        { successCondition: 'default(result, 0) < 0.05' },
      );
      expect((await provider().measure(m, aRun(m), ctx)).value).toBeNull();
      const outcome = await reconcileAnalysisRun(aRun(m), {
        providers: createMetricProviderRegistry([provider()]),
        now: NOW,
      });
      expect(outcome.status.phase).toBe('Successful');
    }
  });

  it("a refused query is an Error carrying Datadog's own message", async () => {
    dd.refuse('sum:broken{', 400, [
      "Error parsing query: \n unable to parse sum:broken{: Rule 'scope_expr' didn't match",
    ]);
    const m = metric({ query: 'sum:broken{' }, { consecutiveErrorLimit: 0 });
    const outcome = await reconcileAnalysisRun(aRun(m), {
      providers: createMetricProviderRegistry([provider()]),
      now: NOW,
    });
    expect(outcome.status.phase).toBe('Error');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.message).toContain(
      "HTTP 400: Error parsing query: \n unable to parse sum:broken{: Rule 'scope_expr' didn't match",
    );
  });
});

describe('datadog provider: where the keys come from', () => {
  const m = metric({ query: 'sum:keys{*}' });
  beforeAll(() => dd.set('sum:keys{*}', 1));

  it('the `datadog` Secret in Rollgate’s namespace, its address the Datadog site', async () => {
    expect((await provider().measure(m, aRun(m), ctx)).value).toBe(1);
  });

  it('secretRef: another Secret there, or with namespaced: true the one in the run’s namespace', async () => {
    const named = metric({ query: 'sum:keys{*}', secretRef: { name: 'dd-team' } });
    expect((await provider({ 'dd-team': keys() }).measure(named, aRun(named), ctx)).value).toBe(1);
    const namespaced = metric({ query: 'sum:keys{*}', secretRef: { name: 'dd', namespaced: true } });
    expect((await provider({ 'shop/dd': keys() }).measure(namespaced, aRun(namespaced), ctx)).value).toBe(1);
    await expect(provider({ dd: keys() }).measure(namespaced, aRun(namespaced), ctx)).rejects.toThrow(
      'Secret shop/dd not found',
    );
  });

  it('DD_API_KEY, DD_APP_KEY and DD_ADDRESS when all three are set and no secretRef is', async () => {
    const env = { DD_API_KEY: dd.apiKey, DD_APP_KEY: dd.appKey, DD_ADDRESS: dd.address };
    expect((await provider({}, env).measure(m, aRun(m), ctx)).value).toBe(1);
  });

  it('a missing Secret or key is an error naming it; a wrong key is Datadog’s 403, the keys never shown', async () => {
    await expect(provider({}).measure(m, aRun(m), ctx)).rejects.toThrow(
      'datadog metric "error-rate": Secret datadog in Rollgate\'s namespace not found',
    );
    await expect(
      provider({ datadog: { 'api-key': dd.apiKey, address: dd.address } }).measure(m, aRun(m), ctx),
    ).rejects.toThrow('has no app-key');
    const wrong = { ...keys(), 'app-key': 'not-the-app-key-77' };
    const error = await provider({ datadog: wrong })
      .measure(m, aRun(m), ctx)
      .catch((e: unknown) => e as Error);
    expect((error as Error).message).toContain('HTTP 403: Forbidden');
    expect((error as Error).message).not.toContain('not-the-app-key-77');
  });
});

describe('datadog provider: its own rate-limit header', () => {
  /** Measures every 10 s until the run ends; returns the run's phase and its measurements. */
  async function runUntilDone(p = provider()) {
    const clock = new ManualClock(NOW.getTime());
    const m = metric(
      { query: 'sum:errors{service:shop}', requestTimeout: '1s' },
      { interval: '10s', consecutiveErrorLimit: 2, successCondition: 'result < 0.05' },
    );
    let run = aRun(m);
    const waits: number[] = [];
    for (
      let pass = 0;
      pass < 20 && !['Successful', 'Failed', 'Error'].includes(run.status?.phase ?? '');
      pass++
    ) {
      const outcome = await reconcileAnalysisRun(run, {
        providers: createMetricProviderRegistry([p]),
        now: clock.now(),
      });
      run = { ...run, status: outcome.status };
      waits.push(outcome.requeueAfterMs ?? 0);
      clock.advance(outcome.requeueAfterMs ?? 10_000);
    }
    return {
      phase: run.status?.phase,
      measurements: run.status?.metricResults?.[0]?.measurements ?? [],
      waits,
      run,
    };
  }

  // 500, timeout, connection refused, Retry-After and recovery: the table in provider-outages.test.ts.
  it('429: an Error that waits as long as Datadog says before asking again', async () => {
    dd.set('sum:errors{service:shop}', 0.01);
    dd.fault = {
      status: 429,
      headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-period': '60', 'x-ratelimit-reset': '42' },
      body: '{"errors":["Too many requests"]}',
    };
    const before = dd.requests.length;
    const { phase, measurements, waits } = await runUntilDone();
    expect(phase).toBe('Error');
    expect(measurements.map((x) => x.phase)).toEqual(['Error', 'Error', 'Error']);
    expect(measurements[0]?.message).toContain('HTTP 429 (rate limited): Too many requests');
    // Asked again 42 s later each time, not after the usual 10 s.
    expect(waits.slice(0, 2)).toEqual([42_000, 42_000]);
    expect(dd.requests.length - before).toBe(3);
  });
});
