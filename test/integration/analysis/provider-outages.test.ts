// Every HTTP metric provider with a vendor's API through the same outages (500, 429, timeout, connection refused): Errors counted against consecutiveErrorLimit, never a verdict, never a crash.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCloudWatchProvider } from '../../../src/analysis/providers/cloudwatch-provider.ts';
import { createDatadogProvider } from '../../../src/analysis/providers/datadog-provider.ts';
import { createInfluxdbProvider } from '../../../src/analysis/providers/influxdb-provider.ts';
import { createKayentaProvider } from '../../../src/analysis/providers/kayenta-provider.ts';
import {
  createMetricProviderRegistry,
  type MetricProvider,
} from '../../../src/analysis/providers/metric-provider.ts';
import { createNewRelicProvider } from '../../../src/analysis/providers/new-relic-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import { createSkyWalkingProvider } from '../../../src/analysis/providers/skywalking-provider.ts';
import {
  createWavefrontProvider,
  WAVEFRONT_SECRET,
} from '../../../src/analysis/providers/wavefront-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import { startCloudWatchDouble } from '../../support/cloudwatch-double.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { startDatadogDouble } from '../../support/datadog-double.ts';
import { startInfluxdbDouble } from '../../support/influxdb-double.ts';
import { startKayentaDouble } from '../../support/kayenta-double.ts';
import { startNewRelicDouble } from '../../support/newrelic-double.ts';
import { startSkyWalkingDouble } from '../../support/skywalking-double.ts';
import { startWavefrontDouble } from '../../support/wavefront-double.ts';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

type Fault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** One provider as the table drives it: its double, a provider reaching it (or `address` instead), a metric whose condition good points pass. */
interface Row {
  /** Sets the double's outage (undefined: answer). */
  fault(fault: Fault | undefined): void;
  provider(unreachable?: string): MetricProvider;
  /** The provider block of a metric that passes on the double's good points. */
  block: Metric['provider'];
  successCondition: string;
  /** How the provider's HTTP timeout shows in the message. */
  timeoutMessage: RegExp;
  /** A body of the vendor's own for a 500 and a 429, and how each shows in the message. */
  serverError: { body: string; message: string };
  rateLimit: { body: string; message: string };
  /** For a provider whose address is in the metric (not in a Secret or the environment): the block reaching `address`. */
  unreachable?: (address: string) => Metric['provider'];
  stop(): Promise<void>;
}

const rows: Record<string, () => Promise<Row>> = {
  async datadog() {
    const dd = await startDatadogDouble();
    dd.set('sum:errors{service:shop}', 0.01);
    const keys = (address: string) => ({ 'api-key': dd.apiKey, 'app-key': dd.appKey, address });
    return {
      fault: (f) => void (dd.fault = f),
      provider: (u) =>
        createDatadogProvider({
          secrets: staticProviderSecrets({ datadog: keys(u ?? dd.address) }),
          env: {},
        }),
      block: { datadog: { query: 'sum:errors{service:shop}', requestTimeout: '1s' } },
      successCondition: 'result < 0.05',
      timeoutMessage: /timed out after 1000 ms/,
      serverError: {
        body: '{"errors":["Internal Server Error"]}',
        message: 'HTTP 500: Internal Server Error',
      },
      rateLimit: {
        body: '{"errors":["Too many requests"]}',
        message: 'HTTP 429 (rate limited): Too many requests',
      },
      stop: () => dd.stop(),
    };
  },
  async newRelic() {
    const nr = await startNewRelicDouble();
    const query =
      'FROM Transaction SELECT percentage(count(*), WHERE httpResponseCode != 500) as successRate';
    nr.rows(query, [{ successRate: 99 }]);
    const profile = (url: string) => ({
      'personal-api-key': nr.apiKey,
      'account-id': String(nr.accountId),
      'base-url-nerdgraph': url,
    });
    return {
      fault: (f) => void (nr.fault = f),
      provider: (u) =>
        createNewRelicProvider({
          secrets: staticProviderSecrets({ newrelic: profile(u ? `${u}/graphql` : nr.url) }),
        }),
      // NRQL timeout 0: NerdGraph's own default, and the HTTP request's 5 s margin alone.
      block: { newRelic: { query, timeout: 0 } },
      successCondition: 'result.successRate >= 95',
      timeoutMessage: /timed out after 5000 ms/,
      serverError: {
        body: '{"errors":[{"message":"Internal server error"}]}',
        message: 'HTTP 500: Internal server error',
      },
      rateLimit: {
        body: '{"errors":[{"message":"Too many requests"}]}',
        message: 'HTTP 429 (rate limited): Too many requests',
      },
      stop: () => nr.stop(),
    };
  },
  async cloudWatch() {
    const cw = await startCloudWatchDouble();
    cw.set({ namespace: 'app', metricName: 'errors' }, 0.001);
    return {
      fault: (f) => void (cw.fault = f),
      provider: (u) =>
        createCloudWatchProvider({
          env: { ...cw.env(), ...(u && { AWS_ENDPOINT_URL_CLOUDWATCH: u }) },
          timeoutMs: 1000,
        }),
      block: {
        cloudWatch: {
          metricDataQueries: [
            {
              id: 'errors',
              metricStat: { metric: { namespace: 'app', metricName: 'errors' }, period: 60, stat: 'Average' },
            },
          ],
        },
      },
      successCondition: 'all(result[0].Values, {# < 0.01})',
      timeoutMessage: /timed out after 1000 ms/,
      serverError: {
        body: '<ErrorResponse><Error><Type>Receiver</Type><Code>InternalServiceError</Code><Message>Internal failure</Message></Error></ErrorResponse>',
        message: 'HTTP 500: InternalServiceError: Internal failure',
      },
      rateLimit: { body: 'Too Many Requests', message: 'HTTP 429 (rate limited): Too Many Requests' },
      stop: () => cw.stop(),
    };
  },
  async influxdb() {
    const influx = await startInfluxdbDouble(() => NOW + 10 * 60_000);
    influx.write('b', 'errors', 'rate', [{ time: NOW, value: 0.001 }]);
    const profile = (address: string) => ({ address, authToken: influx.token, org: influx.org });
    return {
      fault: (f) => void (influx.fault = f),
      provider: (u) =>
        createInfluxdbProvider({
          secrets: staticProviderSecrets({ influxdb: profile(u ?? influx.address) }),
          timeoutMs: 1000,
        }),
      block: { influxdb: { query: 'from(bucket: "b") |> range(start: -1h)' } },
      successCondition: 'result[0] < 0.01',
      timeoutMessage: /timed out after 1000 ms/,
      serverError: {
        body: '{"code":"internal error","message":"storage unavailable"}',
        message: 'HTTP 500: internal error: storage unavailable',
      },
      rateLimit: {
        body: '{"code":"too many requests","message":"org over quota"}',
        message: 'HTTP 429 (rate limited): too many requests: org over quota',
      },
      stop: () => influx.stop(),
    };
  },
  async wavefront() {
    const wf = await startWavefrontDouble();
    wf.set('ts(errors, service=shop)', 0.001);
    const tokens = staticProviderSecrets({ [WAVEFRONT_SECRET]: { [wf.tokenKey]: wf.token } });
    const status = (code: number, message: string) =>
      JSON.stringify({ status: { result: 'ERROR', message, code } });
    return {
      fault: (f) => void (wf.fault = f),
      provider: () => createWavefrontProvider({ secrets: tokens, timeoutMs: 1000 }),
      block: { wavefront: { address: wf.address, query: 'ts(errors, service=shop)' } },
      successCondition: 'result < 0.01',
      timeoutMessage: /timed out after 1000 ms/,
      serverError: { body: status(500, 'Internal error'), message: 'HTTP 500: Internal error' },
      rateLimit: {
        body: status(429, 'Too many requests'),
        message: 'HTTP 429 (rate limited): Too many requests',
      },
      unreachable: (u) => ({ wavefront: { address: u, query: 'ts(errors, service=shop)' } }),
      stop: async () => {
        expect(wf.violations).toEqual([]);
        await wf.stop();
      },
    };
  },
  async skywalking() {
    const sw = await startSkyWalkingDouble();
    sw.set('service_sla', 'shop', 9999);
    const query =
      'query q($duration: Duration!) { sla: readNullableMetricsValue(condition: {name: "service_sla", entity: {serviceName: "shop", normal: true}}, duration: $duration) { value } }';
    const errors = (message: string) => JSON.stringify({ errors: [{ message }] });
    return {
      fault: (f) => void (sw.fault = f),
      provider: () => createSkyWalkingProvider({ timeoutMs: 1000 }),
      block: { skywalking: { address: sw.address, query, interval: '5m' } },
      successCondition: 'result.sla.value >= 9900',
      timeoutMessage: /timed out after 1000 ms/,
      serverError: { body: errors('OAP storage unavailable'), message: 'HTTP 500: OAP storage unavailable' },
      rateLimit: { body: errors('Too many requests'), message: 'HTTP 429 (rate limited): Too many requests' },
      unreachable: (u) => ({ skywalking: { address: u, query, interval: '5m' } }),
      stop: async () => {
        expect(sw.violations).toEqual([]);
        await sw.stop();
      },
    };
  },
  async kayenta() {
    const kayenta = await startKayentaDouble();
    kayenta.addConfig({ name: 'canary-config', application: 'shop', metrics: ['latency'] });
    kayenta.set('version=stable', 'latency', 100);
    kayenta.set('version=canary', 'latency', 101);
    kayenta.pollsUntilComplete = 0;
    const block = (address: string): Metric['provider'] => ({
      kayenta: {
        address,
        application: 'shop',
        canaryConfigName: 'canary-config',
        threshold: { pass: 90, marginal: 75 },
        scopes: [
          {
            name: 'default',
            controlScope: { scope: 'version=stable', step: 60 },
            experimentScope: { scope: 'version=canary', step: 60 },
          },
        ],
      },
    });
    return {
      fault: (f) => void (kayenta.fault = f),
      provider: () => createKayentaProvider({ timeoutMs: 1000 }),
      block: block(kayenta.address),
      // Kayenta judges by its score; conditions are not evaluated (as in Argo).
      successCondition: 'true',
      timeoutMessage: /timed out after 1000 ms/,
      serverError: {
        body: '{"message":"Internal Server Error"}',
        message: 'listing canary configs: HTTP 500: Internal Server Error',
      },
      rateLimit: {
        body: '{"message":"Too many requests"}',
        message: 'listing canary configs: HTTP 429 (rate limited): Too many requests',
      },
      unreachable: block,
      stop: async () => {
        expect(kayenta.violations).toEqual([]);
        await kayenta.stop();
      },
    };
  },
};

function aRun(m: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'shop', uid: 'u' },
    spec: { metrics: [m] },
  };
}

/** Measures every 10 s (or as long as a 429 asked) until the run ends; its phase, measurements and waits. */
async function runUntilDone(
  row: Row,
  provider: MetricProvider,
  consecutiveErrorLimit: number,
  block: Metric['provider'] = row.block,
) {
  const clock = new ManualClock(NOW);
  const m: Metric = {
    name: 'canary-health',
    interval: '10s',
    count: 2,
    consecutiveErrorLimit,
    successCondition: row.successCondition,
    provider: block,
  };
  let run = aRun(m);
  const waits: number[] = [];
  const providers = createMetricProviderRegistry([provider]);
  for (
    let pass = 0;
    pass < 20 && !['Successful', 'Failed', 'Error'].includes(run.status?.phase ?? '');
    pass++
  ) {
    const outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
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

describe.each(Object.keys(rows))(
  '%s outages: Errors counted against consecutiveErrorLimit, never a verdict',
  (name) => {
    let row: Row;
    beforeAll(async () => {
      row = await (rows[name] as () => Promise<Row>)();
    });
    afterAll(async () => {
      await row?.stop();
    });
    afterEach(() => row.fault(undefined));

    it('answering: good points pass (the row is sound)', async () => {
      const { phase } = await runUntilDone(row, row.provider(), 2);
      expect(phase).toBe('Successful');
    });

    it('a 500: three Errors in a row end the run as Error (limit 2), the vendor’s message kept', async () => {
      row.fault({ status: 500, body: row.serverError.body });
      const { phase, measurements, run } = await runUntilDone(row, row.provider(), 2);
      expect(phase).toBe('Error');
      expect(measurements.map((x) => x.phase)).toEqual(['Error', 'Error', 'Error']);
      expect(measurements[0]?.message).toContain(row.serverError.message);
      expect(run.status?.metricResults?.[0]?.consecutiveError).toBe(3);
    });

    it('a 429: Errors that wait as long as Retry-After says before asking again', async () => {
      row.fault({ status: 429, headers: { 'retry-after': '15' }, body: row.rateLimit.body });
      const { phase, measurements, waits } = await runUntilDone(row, row.provider(), 2);
      expect(phase).toBe('Error');
      expect(measurements.map((x) => x.phase)).toEqual(['Error', 'Error', 'Error']);
      expect(measurements[0]?.message).toContain(row.rateLimit.message);
      expect(waits.slice(0, 2)).toEqual([15_000, 15_000]);
    });

    it('a timeout: an Error (limit 0 ends the run at once)', async () => {
      row.fault('hang');
      const { phase, measurements } = await runUntilDone(row, row.provider(), 0);
      expect(phase).toBe('Error');
      expect(measurements[0]?.message).toMatch(row.timeoutMessage);
    }, 15_000);

    it('connection refused: the same Errors', async () => {
      const port = await closedLoopbackPort();
      const address = `http://127.0.0.1:${port}`;
      const { phase, measurements } = row.unreachable
        ? await runUntilDone(row, row.provider(), 2, row.unreachable(address))
        : await runUntilDone(row, row.provider(address), 2);
      expect(phase).toBe('Error');
      expect(measurements).toHaveLength(3);
      expect(measurements[0]?.message).toMatch(/ECONNREFUSED/);
    });

    it('back from an outage, good points pass', async () => {
      row.fault({ status: 503, body: row.serverError.body });
      const clock = new ManualClock(NOW);
      const m: Metric = {
        name: 'h',
        interval: '10s',
        count: 2,
        successCondition: row.successCondition,
        provider: row.block,
      };
      let run = aRun(m);
      const providers = createMetricProviderRegistry([row.provider()]);
      let outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
      run = { ...run, status: outcome.status };
      row.fault(undefined);
      for (let pass = 0; pass < 10 && run.status?.phase === 'Running'; pass++) {
        clock.advance(outcome.requeueAfterMs ?? 10_000);
        outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
        run = { ...run, status: outcome.status };
      }
      expect(run.status?.phase).toBe('Successful');
      expect(run.status?.metricResults?.[0]?.measurements?.map((x) => x.phase)).toEqual([
        'Error',
        'Successful',
        'Successful',
      ]);
    });
  },
);

describe('cloudWatch: throttling comes as 400 Throttling in the Query protocol', () => {
  let row: Row;
  beforeAll(async () => {
    row = await (rows['cloudWatch'] as () => Promise<Row>)();
  });
  afterAll(async () => {
    await row?.stop();
  });

  it('is a rate limit: an Error asked again no sooner than the default wait (30 s), never a failure', async () => {
    row.fault({
      status: 400,
      body: '<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>',
    });
    const { phase, measurements, waits } = await runUntilDone(row, row.provider(), 2);
    expect(phase).toBe('Error');
    expect(measurements[0]?.message).toContain('HTTP 400 (rate limited): Throttling: Rate exceeded');
    expect(waits.slice(0, 2)).toEqual([30_000, 30_000]);
  });
});

describe('kayenta: an outage in the middle of a judgement', () => {
  let row: Row;
  beforeAll(async () => {
    row = await (rows['kayenta'] as () => Promise<Row>)();
  });
  afterAll(async () => {
    await row?.stop();
  });

  it('a failed poll ends that judgement as an Error; the next measurement starts another and passes', async () => {
    const clock = new ManualClock(NOW);
    const providers = createMetricProviderRegistry([row.provider()]);
    let run = aRun({ name: 'judge', interval: '10s', count: 1, provider: row.block });
    let outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
    run = { ...run, status: outcome.status };
    expect(run.status?.metricResults?.[0]?.measurements?.[0]?.phase).toBe('Running');
    row.fault({ status: 503, body: '{"message":"Service Unavailable"}' });
    clock.advance(outcome.requeueAfterMs ?? 15_000);
    outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
    run = { ...run, status: outcome.status };
    const failed = run.status?.metricResults?.[0]?.measurements?.[0];
    expect(failed?.phase).toBe('Error');
    expect(failed?.message).toMatch(/reading execution [0-9a-f-]{36}: HTTP 503: Service Unavailable/);
    row.fault(undefined);
    for (let pass = 0; pass < 10 && run.status?.phase === 'Running'; pass++) {
      clock.advance(outcome.requeueAfterMs ?? 10_000);
      outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
      run = { ...run, status: outcome.status };
    }
    expect(run.status?.phase).toBe('Successful');
    expect(run.status?.metricResults?.[0]?.measurements?.map((x) => x.phase)).toEqual([
      'Error',
      'Successful',
    ]);
  });
});
