// The InfluxDB provider against a double that checks each request against InfluxDB's OpenAPI description and runs Flux over written points.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInfluxdbProvider } from '../../../src/analysis/providers/influxdb-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, InfluxdbMetric, Metric } from '../../../src/manifest/analysis.ts';
import { startInfluxdbDouble, type InfluxdbDouble } from '../../support/influxdb-double.ts';

const MINUTE = 60_000;
const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
const MEASUREMENT = 'istio:istio_requests_errors_percentage:rate1m:5xx';
/** Argo's documented query, its arg filled in. */
const ARGO_QUERY = (app: string) => `from(bucket: "app_istio")
  |> range(start: -15m)
  |> filter(fn: (r) => r["destination_workload"] == "${app}")
  |> filter(fn: (r) => r["_measurement"] == "${MEASUREMENT}")
`;

let influx: InfluxdbDouble;
beforeAll(async () => {
  influx = await startInfluxdbDouble(() => clock.now().getTime());
});
afterAll(async () => {
  await influx?.stop();
});
afterEach(() => {
  influx.fault = undefined;
  expect(influx.violations).toEqual([]);
});

function profile(overrides: Record<string, string> = {}) {
  return { address: influx.address, authToken: influx.token, org: influx.org, ...overrides };
}
function provider(secrets: Record<string, Record<string, string>> = { influxdb: profile() }) {
  return createInfluxdbProvider({ secrets: staticProviderSecrets(secrets) });
}
function metric(influxdb: InfluxdbMetric, fields: Partial<Metric> = {}): Metric {
  return { name: 'error-rate', provider: { influxdb }, ...fields };
}
function aRun(m: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'shop', uid: 'u' },
    spec: { metrics: [m] },
  };
}
const ctx = () => ({ now: clock.now(), logger: silentLogger });
async function thrown(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
const at = (minutesAgo: number) => clock.now().getTime() - minutesAgo * MINUTE;

describe('influxdb provider: Flux over /api/v2/query', () => {
  it("Argo's example: every record's _value in the window, in order, as result (result[0] the first)", async () => {
    influx.write('app_istio', MEASUREMENT, 'value', [
      { time: at(30), value: 0.9, tags: { destination_workload: 'shop' } }, // before the range
      { time: at(10), value: 0.004, tags: { destination_workload: 'shop' } },
      { time: at(5), value: 0.006, tags: { destination_workload: 'shop' } },
      { time: at(5), value: 0.5, tags: { destination_workload: 'cart' } }, // filtered out
    ]);
    const m = metric({ query: ARGO_QUERY('shop') });
    const answer = await provider().measure(m, aRun(m), ctx());
    expect(answer).toMatchObject({ value: [0.004, 0.006], raw: '[0.004 0.006]' });
    const request = influx.requests.at(-1);
    expect(request?.org).toBe(influx.org);
    expect(request?.body).toMatchObject({ query: ARGO_QUERY('shop'), type: 'flux' });
  });

  it('several tables are read one after the other; a reduced table is one value', async () => {
    influx.write('b2', 'latency', 'p99', [
      { time: at(3), value: 120, tags: { pod: 'a' } },
      { time: at(2), value: 180, tags: { pod: 'a' } },
      { time: at(2), value: 300, tags: { pod: 'b' } },
    ]);
    const query =
      'from(bucket: "b2") |> range(start: -10m) |> filter(fn: (r) => r._measurement == "latency") |> mean()';
    const m = metric({ query });
    expect((await provider().measure(m, aRun(m), ctx())).value).toEqual([150, 300]);
  });

  it('no record is an error, as in Argo', async () => {
    const m = metric({ query: 'from(bucket: "empty") |> range(start: -5m)' });
    expect((await thrown(provider().measure(m, aRun(m), ctx()))).message).toBe(
      'influxdb metric "error-rate": no results returned from flux query',
    );
  });

  it("InfluxDB's own message for a query it refuses", async () => {
    const m = metric({ query: 'from(bucket: "app_istio")' });
    expect((await thrown(provider().measure(m, aRun(m), ctx()))).message).toContain(
      'HTTP 400: invalid: compilation failed: cannot submit unbounded read',
    );
  });
});

describe('influxdb provider: the profile Secret', () => {
  it('`profile` names another Secret in Rollgate’s namespace', async () => {
    influx.write('p', 'm', 'f', [{ time: at(1), value: 7 }]);
    const m = metric({ profile: 'my-influxdb-secret', query: 'from(bucket: "p") |> range(start: -5m)' });
    const answer = await provider({ 'my-influxdb-secret': profile() }).measure(m, aRun(m), ctx());
    expect(answer.value).toEqual([7]);
  });

  it('a missing Secret or key is an error naming it; a wrong token is InfluxDB’s 401, the token never shown', async () => {
    const m = metric({ query: 'from(bucket: "p") |> range(start: -5m)' });
    expect((await thrown(provider({}).measure(m, aRun(m), ctx()))).message).toContain(
      "Secret influxdb in Rollgate's namespace not found (it holds address, authToken and org)",
    );
    expect(
      (await thrown(provider({ influxdb: profile({ org: '' }) }).measure(m, aRun(m), ctx()))).message,
    ).toContain('has no org');
    const wrong = await thrown(
      provider({ influxdb: profile({ authToken: 'wrong-token-1234' }) }).measure(m, aRun(m), ctx()),
    );
    expect(wrong.message).toContain('HTTP 401: unauthorized: unauthorized access');
    expect(wrong.message).not.toContain('wrong-token-1234');
  });
});

describe('influxdb provider: a canary judged by Argo’s condition', () => {
  async function runWith(app: string, value: number): Promise<AnalysisRun> {
    influx.write('app_istio', MEASUREMENT, 'value', [
      { time: at(1), value, tags: { destination_workload: app } },
      { time: at(0.5), value, tags: { destination_workload: app } },
    ]);
    const m = metric(
      { query: ARGO_QUERY(app) },
      { interval: '10s', count: 2, successCondition: 'result[0] <= 0.01' },
    );
    let run = aRun(m);
    const providers = createMetricProviderRegistry([provider()]);
    for (
      let pass = 0;
      pass < 10 && !['Successful', 'Failed', 'Error'].includes(run.status?.phase ?? '');
      pass++
    ) {
      const outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
      run = { ...run, status: outcome.status };
      clock.advance(outcome.requeueAfterMs ?? 10_000);
    }
    return run;
  }

  it('Successful on a low error rate, Failed on a high one', async () => {
    expect((await runWith('good', 0.002)).status?.phase).toBe('Successful');
    const bad = await runWith('bad', 0.2);
    expect(bad.status?.phase).toBe('Failed');
    expect(bad.status?.metricResults?.[0]?.measurements?.[0]?.value).toBe('[0.2 0.2]');
  });
});
