// Canary analysis end to end on CloudWatch and InfluxDB metrics (sandbox + API doubles): promoted on good points, aborted on bad ones or an outage.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createClusterMetricProviders } from '../../../src/reconciler/analysis-run-reconciler.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { startCloudWatchDouble, type CloudWatchDouble } from '../../support/cloudwatch-double.ts';
import { startInfluxdbDouble, type InfluxdbDouble } from '../../support/influxdb-double.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import { ReconcileHarness, analysisRunsOf, createAnalysisTemplate, driveUntil } from './analysis-harness.ts';

/** Where the reconciler reads provider Secrets (kubernetes.stateNamespace). */
const OWN_NAMESPACE = 'rollgate-system';
const MEASUREMENT = 'istio:istio_requests_errors_percentage:rate1m:5xx';

let harness: ReconcileHarness;
let cw: CloudWatchDouble;
let influx: InfluxdbDouble;
let providers: MetricProviderRegistry;

beforeAll(async () => {
  [harness, cw, influx] = await Promise.all([
    ReconcileHarness.start({ seed: 34 }),
    startCloudWatchDouble(),
    startInfluxdbDouble(),
  ]);
  await harness.clients.core.createNamespace({ body: { metadata: { name: OWN_NAMESPACE } } });
  // The profile Secret as Argo's docs show it, in Rollgate's namespace; read through the cluster wiring.
  await harness.clients.core.createNamespacedSecret({
    namespace: OWN_NAMESPACE,
    body: {
      metadata: { name: 'influxdb' },
      data: Object.fromEntries(
        Object.entries({ address: influx.address, authToken: influx.token, org: influx.org }).map(
          ([k, v]) => [k, Buffer.from(v).toString('base64')],
        ),
      ),
    },
  });
  // CloudWatch's region, key and endpoint come from the reconciler's environment, as the AWS SDK reads them.
  providers = createClusterMetricProviders(
    harness.clients,
    { allowedHosts: [], deniedHosts: [], jobServiceAccounts: [] },
    OWN_NAMESPACE,
    cw.env(),
  );
  // Argo's documented templates, as written there (the CloudWatch error rate; the InfluxDB error percentage).
  await createAnalysisTemplate(harness, 'cloudwatch-success-rate', {
    args: [{ name: 'service-name' }],
    metrics: [
      {
        name: 'success-rate',
        interval: '1m',
        count: 2,
        successCondition: 'len(result[0].Values) >= 5 and all(result[0].Values, {# <= 0.01})',
        failureLimit: 0,
        provider: {
          cloudWatch: {
            interval: '30m',
            metricDataQueries: [
              { id: 'rate', expression: 'errors / requests' },
              {
                id: 'errors',
                metricStat: {
                  metric: {
                    namespace: 'app',
                    metricName: 'errors',
                    dimensions: [{ name: 'Service', value: '{{args.service-name}}' }],
                  },
                  period: 300,
                  stat: 'Sum',
                  unit: 'Count',
                },
                returnData: false,
              },
              {
                id: 'requests',
                metricStat: {
                  metric: {
                    namespace: 'app',
                    metricName: 'requests',
                    dimensions: [{ name: 'Service', value: '{{args.service-name}}' }],
                  },
                  period: 300,
                  stat: 'Sum',
                  unit: 'Count',
                },
                returnData: false,
              },
            ],
          },
        },
      },
    ],
  });
  await createAnalysisTemplate(harness, 'influxdb-error-rate', {
    args: [{ name: 'application-name' }],
    metrics: [
      {
        name: 'error-rate',
        interval: '5s',
        count: 2,
        successCondition: 'result[0] <= 0.01',
        failureLimit: 0,
        provider: {
          influxdb: {
            query: `from(bucket: "app_istio")
  |> range(start: -15m)
  |> filter(fn: (r) => r["destination_workload"] == "{{ args.application-name }}")
  |> filter(fn: (r) => r["_measurement"] == "${MEASUREMENT}")
`,
          },
        },
      },
    ],
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([harness?.stop(), cw?.stop(), influx?.stop()]);
});
afterEach(() => {
  cw.fault = undefined;
  influx.fault = undefined;
  expect(cw.violations).toEqual([]);
  expect(cw.refusedSignatures).toEqual([]);
  expect(influx.violations).toEqual([]);
  expect(harness.violations).toEqual([]);
});

function canaryWeight(observed: ObservedState): number | undefined {
  return observed.rollout.status?.canary?.weights?.canary.weight;
}
const aborted = (o: ObservedState): boolean =>
  o.rollout.status?.phase === 'Degraded' && canaryWeight(o) === 0;

/** A rollout promoted at app:1.0 whose canary steps run `template` with the app's name as `arg`, then given app:2.0. */
async function canaryWithAnalysis(name: string, template: string, arg: string): Promise<RolloutKey> {
  const object = testRollout({ name, replicas: 4, steps: [] });
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  spec.strategy.canary = {
    ...spec.strategy.canary,
    steps: [
      { setWeight: 25 },
      { analysis: { templates: [{ templateName: template }], args: [{ name: arg, value: name }] } },
      { setWeight: 50 },
    ],
  };
  const key = await harness.createRollout(object);
  await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 60_000, providers });
  await harness.patchSpec(key, {
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
    },
  });
  return key;
}

function cloudWatchTraffic(service: string, errors: number, requests: number): void {
  cw.set({ namespace: 'app', metricName: 'errors', dimensions: { Service: service } }, errors);
  cw.set({ namespace: 'app', metricName: 'requests', dimensions: { Service: service } }, requests);
}

/** Points of the app's error percentage every 30 s over the last 20 minutes of the harness's clock and the next 20. */
function influxPoints(app: string, value: number): void {
  const now = harness.clock.now().getTime();
  influx.write(
    'app_istio',
    MEASUREMENT,
    'value',
    Array.from({ length: 80 }, (_, i) => ({
      time: now - 20 * 60_000 + i * 30_000,
      value,
      tags: { destination_workload: app },
    })),
  );
}

describe('CloudWatch', () => {
  it('promotes a canary whose error rate stays under 1 %', async () => {
    cloudWatchTraffic('cw-good', 1, 200);
    const key = await canaryWithAnalysis('cw-good', 'cloudwatch-success-rate', 'service-name');
    const before = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 300_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).not.toBe(before);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.measurements?.[0]?.value).toBe(
      '[[0.005 0.005 0.005 0.005 0.005 0.005]]',
    );
  });

  it('aborts a canary whose error rate is 3 %: Degraded, weight 0, stable kept', async () => {
    cloudWatchTraffic('cw-bad', 6, 200);
    const key = await canaryWithAnalysis('cw-bad', 'cloudwatch-success-rate', 'service-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, aborted, { timeoutMs: 300_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
  });

  it('throttled on every call (400 Throttling): aborted as an Error, never promoted', async () => {
    cloudWatchTraffic('cw-throttled', 0, 200);
    const key = await canaryWithAnalysis('cw-throttled', 'cloudwatch-success-rate', 'service-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    cw.fault = {
      status: 400,
      body: '<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>',
    };
    await driveUntil(harness, key, aborted, { timeoutMs: 600_000, stepMs: 10_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Error');
    const result = run?.status?.metricResults?.[0];
    // consecutiveErrorLimit is Argo's default, 4: the fifth Error in a row ends it.
    expect(result?.consecutiveError).toBe(5);
    expect(result?.measurements?.at(-1)?.message).toContain('(rate limited): Throttling: Rate exceeded');
  });
});

describe('InfluxDB', () => {
  it('promotes a canary whose error percentage is low', async () => {
    influxPoints('influx-good', 0.002);
    const key = await canaryWithAnalysis('influx-good', 'influxdb-error-rate', 'application-name');
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000, providers });
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.measurements?.[0]?.value).toMatch(/^\[0\.002( 0\.002)+\]$/);
  });

  it('aborts a canary whose error percentage is high', async () => {
    influxPoints('influx-bad', 0.3);
    const key = await canaryWithAnalysis('influx-bad', 'influxdb-error-rate', 'application-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, aborted, { timeoutMs: 120_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
  });

  it('InfluxDB down (500 on every call): aborted as an Error, never promoted', async () => {
    influxPoints('influx-down', 0);
    const key = await canaryWithAnalysis('influx-down', 'influxdb-error-rate', 'application-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    influx.fault = { status: 500, body: '{"code":"internal error","message":"storage unavailable"}' };
    await driveUntil(harness, key, aborted, { timeoutMs: 300_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Error');
    expect(run?.status?.metricResults?.[0]?.measurements?.at(-1)?.message).toContain(
      'HTTP 500: internal error: storage unavailable',
    );
  });
});
