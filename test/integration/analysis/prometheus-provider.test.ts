// The prometheus provider against a REAL Prometheus scraping a test exporter, and its HTTP details against a stub.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrometheusProvider } from '../../../src/analysis/providers/prometheus-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import { startPrometheus, type TestPrometheus } from '../../support/prometheus.ts';

const provider = createPrometheusProvider();
const registry = createMetricProviderRegistry([provider]);
const ctx = { now: new Date(Date.UTC(2026, 0, 1)), logger: silentLogger };

function promMetric(address: string, query: string, fields: Partial<Metric> = {}): Metric {
  return { name: 'm', provider: { prometheus: { address, query } }, ...fields };
}

function aRun(metric: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'default', uid: 'u' },
    spec: { metrics: [metric] },
  };
}

describe('prometheus provider against a real Prometheus', () => {
  let prom: TestPrometheus;

  beforeAll(async () => {
    prom = await startPrometheus();
    prom.exporter.set('checkout_success_rate', 0.99, { pod: 'canary-1' });
    prom.exporter.set('checkout_success_rate', 0.97, { pod: 'canary-2' });
    await prom.waitFor('checkout_success_rate', (v) => v.length === 2);
  }, 60_000);

  afterAll(async () => {
    await prom?.stop();
  });

  it('maps an instant vector to an array of sample values', async () => {
    const answer = await provider.measure(
      promMetric(prom.address, 'sort_desc(checkout_success_rate)'),
      aRun(promMetric('', '')),
      ctx,
    );
    expect(answer.value).toEqual([0.99, 0.97]);
    expect(answer.raw).toBe('[0.99,0.97]');
  });

  it('maps a scalar to a number', async () => {
    const answer = await provider.measure(
      promMetric(prom.address, 'scalar(min(checkout_success_rate))'),
      aRun(promMetric('', '')),
      ctx,
    );
    expect(answer.value).toBe(0.97);
    expect(answer.raw).toBe('0.97');
  });

  it('maps an empty result to an empty array (len(result) == 0 works)', async () => {
    const answer = await provider.measure(
      promMetric(prom.address, 'no_such_metric_anywhere'),
      aRun(promMetric('', '')),
      ctx,
    );
    expect(answer.value).toEqual([]);
  });

  it('a canary is judged Successful on good metrics and Failed once they turn bad', async () => {
    const clock = new ManualClock();
    const metric = promMetric(prom.address, 'min(checkout_error_rate)', {
      name: 'error-rate',
      interval: '10s',
      count: 3,
      successCondition: 'result[0] <= 0.01',
    });
    prom.exporter.set('checkout_error_rate', 0.001);
    await prom.waitFor('checkout_error_rate', (v) => v[0] === 0.001);
    let run = aRun(metric);
    let outcome = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    expect(outcome.status.phase).toBe('Running');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]).toMatchObject({
      phase: 'Successful',
      value: '[0.001]',
    });

    prom.exporter.set('checkout_error_rate', 0.2);
    await prom.waitFor('checkout_error_rate', (v) => v[0] === 0.2);
    run = { ...run, status: outcome.status };
    clock.advance(outcome.requeueAfterMs ?? 0);
    outcome = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    expect(outcome.status.phase).toBe('Failed');
    expect(outcome.status.metricResults?.[0]?.measurements?.[1]).toMatchObject({
      phase: 'Failed',
      value: '[0.2]',
    });
  });

  it('NaN from Prometheus reaches conditions as NaN', async () => {
    prom.exporter.set('checkout_latency_nan', NaN);
    await prom.waitFor('checkout_latency_nan', (v) => v.length === 1);
    const answer = await provider.measure(
      promMetric(prom.address, 'checkout_latency_nan'),
      aRun(promMetric('', '')),
      ctx,
    );
    expect(answer.raw).toBe('[NaN]');
    const outcome = await reconcileAnalysisRun(
      aRun(promMetric(prom.address, 'checkout_latency_nan', { successCondition: 'isNaN(result[0])' })),
      { providers: registry, now: ctx.now },
    );
    expect(outcome.status.phase).toBe('Successful');
  });

  it('a bad query is an Error measurement carrying Prometheus’ reason', async () => {
    const outcome = await reconcileAnalysisRun(
      aRun(promMetric(prom.address, 'sum(', { consecutiveErrorLimit: 0 })),
      {
        providers: registry,
        now: ctx.now,
      },
    );
    expect(outcome.status.phase).toBe('Error');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.message).toMatch(
      /HTTP 400: bad_data: .*parse error/,
    );
  });

  it('a range vector result is mapped as Argo maps a matrix: every sample, series after series', async () => {
    const answer = await provider.measure(
      promMetric(prom.address, 'checkout_success_rate[3s]'),
      aRun(promMetric('', '')),
      { ...ctx, now: new Date() },
    );
    const values = answer.value as number[];
    expect(values.length).toBeGreaterThanOrEqual(2);
    // Series after series: the 0.99 samples (one pod) then the 0.97 ones, never interleaved.
    const firstLow = values.indexOf(0.97);
    expect(firstLow).toBeGreaterThan(0);
    expect(values.slice(0, firstLow).every((v) => v === 0.99)).toBe(true);
    expect(values.slice(firstLow).every((v) => v === 0.97)).toBe(true);
  });

  it('a rangeQuery asks query_range for start..end at step and hands conditions every sample', async () => {
    // A series that was bad and is good now: an instant query sees only "good", the range sees both.
    prom.exporter.set('checkout_latency_ms', 2500);
    await prom.waitFor('checkout_latency_ms', (v) => v[0] === 2500);
    prom.exporter.set('checkout_latency_ms', 200);
    await prom.waitFor('checkout_latency_ms', (v) => v[0] === 200);
    const now = new Date();
    const metric = promMetric(prom.address, 'checkout_latency_ms', {
      successCondition: 'all(result, # < 1000)',
    });
    const instant = await reconcileAnalysisRun(aRun(metric), { providers: registry, now });
    expect(instant.status.phase).toBe('Successful');

    const ranged: Metric = {
      ...metric,
      provider: {
        prometheus: {
          address: prom.address,
          query: 'checkout_latency_ms',
          rangeQuery: { start: 'now() - duration("1m")', end: 'now()', step: '1s' },
        },
      },
    };
    const answer = await provider.measure(ranged, aRun(ranged), { ...ctx, now });
    const values = answer.value as number[];
    expect(values).toContain(2500);
    expect(values.at(-1)).toBe(200);
    expect(answer.raw).toBe(`[${values.join(',')}]`);
    const outcome = await reconcileAnalysisRun(aRun(ranged), { providers: registry, now });
    expect(outcome.status.phase).toBe('Failed');

    // A window that ends before the bad samples existed holds nothing: all() of nothing holds.
    const before: Metric = {
      ...ranged,
      provider: {
        prometheus: {
          address: prom.address,
          query: 'checkout_latency_ms',
          rangeQuery: { start: 'now() - duration("2h")', end: 'now() - duration("1h")', step: '1m' },
        },
      },
    };
    expect((await provider.measure(before, aRun(before), { ...ctx, now })).value).toEqual([]);
  });

  it('a rangeQuery whose bounds do not evaluate is an Error measurement naming the field', async () => {
    const metric: Metric = {
      name: 'm',
      provider: {
        prometheus: {
          address: prom.address,
          query: 'up',
          rangeQuery: { start: 'now() - "5m"', end: 'now()', step: '1m' },
        },
      },
    };
    await expect(provider.measure(metric, aRun(metric), ctx)).rejects.toThrow(
      /rangeQuery: "now\(\) - \\"5m\\"": /,
    );
  });
});

describe('prometheus provider HTTP details', () => {
  let server: Server;
  let address: string;
  const seen: Array<{ req: IncomingMessage; body: string }> = [];
  let delayMs = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ req, body });
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              status: 'success',
              data: { resultType: 'vector', result: [{ metric: {}, value: [1, '+Inf'] }] },
            }),
          );
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const a = server.address();
    address = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends headers (bearer token), turns user:password in the address into basic auth, and posts the query', async () => {
    seen.length = 0;
    const withUser = address.replace('http://', 'http://reader:s3cret@');
    const metric: Metric = {
      name: 'm',
      provider: {
        prometheus: {
          address: `${withUser}/prefix/`,
          query: 'up == 1',
          headers: [{ key: 'X-Scope-OrgID', value: 'team-a' }],
        },
      },
    };
    const answer = await provider.measure(metric, aRun(metric), ctx);
    expect(answer.value).toEqual([Infinity]);
    const [call] = seen;
    expect(call?.req.url).toBe('/prefix/api/v1/query');
    expect(call?.req.method).toBe('POST');
    expect(new URLSearchParams(call?.body).get('query')).toBe('up == 1');
    expect(call?.req.headers['x-scope-orgid']).toBe('team-a');
    expect(call?.req.headers.authorization).toBe(`Basic ${Buffer.from('reader:s3cret').toString('base64')}`);

    seen.length = 0;
    const bearer: Metric = {
      name: 'm',
      provider: {
        prometheus: { address, query: 'up', headers: [{ key: 'Authorization', value: 'Bearer tok' }] },
      },
    };
    await provider.measure(bearer, aRun(bearer), ctx);
    expect(seen[0]?.req.headers.authorization).toBe('Bearer tok');
  });

  it('times out after `timeout` seconds', async () => {
    delayMs = 4000;
    const metric: Metric = { name: 'm', provider: { prometheus: { address, query: 'up', timeout: 1 } } };
    const started = performance.now();
    await expect(provider.measure(metric, aRun(metric), ctx)).rejects.toThrow(/timed out after 1000 ms/);
    expect(performance.now() - started).toBeLessThan(3000);
    delayMs = 0;
  });

  it('refuses a missing address and non-http schemes', async () => {
    const none: Metric = { name: 'm', provider: { prometheus: { query: 'up' } } };
    await expect(provider.measure(none, aRun(none), ctx)).rejects.toThrow(/address is required/);
    const file: Metric = { name: 'm', provider: { prometheus: { address: 'file:///etc', query: 'up' } } };
    await expect(provider.measure(file, aRun(file), ctx)).rejects.toThrow(/scheme "file:" is not allowed/);
  });
});
