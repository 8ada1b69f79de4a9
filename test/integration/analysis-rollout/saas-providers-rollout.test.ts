// Canary analysis end to end on Datadog and New Relic metrics (sandbox + API doubles): promoted on good points, aborted on bad ones or an outage.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createClusterMetricProviders } from '../../../src/reconciler/analysis-run-reconciler.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { startDatadogDouble, type DatadogDouble } from '../../support/datadog-double.ts';
import { startNewRelicDouble, type NewRelicDouble } from '../../support/newrelic-double.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import { ReconcileHarness, analysisRunsOf, createAnalysisTemplate, driveUntil } from './analysis-harness.ts';

/** Where the reconciler reads provider Secrets (kubernetes.stateNamespace). */
const OWN_NAMESPACE = 'rollgate-system';
const ERRORS = (app: string) => `sum:requests.errors{service:${app}}.as_count()`;
const REQUESTS = (app: string) => `sum:requests{service:${app}}.as_count()`;
const NRQL = (app: string) =>
  `FROM Transaction SELECT percentage(count(*), WHERE httpResponseCode != 500) as successRate where appName = '${app}'`;

let harness: ReconcileHarness;
let dd: DatadogDouble;
let nr: NewRelicDouble;
let providers: MetricProviderRegistry;

beforeAll(async () => {
  [harness, dd, nr] = await Promise.all([
    ReconcileHarness.start({ seed: 33 }),
    startDatadogDouble(),
    startNewRelicDouble(),
  ]);
  const secret = (name: string, data: Record<string, string>) =>
    harness.clients.core.createNamespacedSecret({
      namespace: OWN_NAMESPACE,
      body: {
        metadata: { name },
        data: Object.fromEntries(
          Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
      },
    });
  await harness.clients.core.createNamespace({ body: { metadata: { name: OWN_NAMESPACE } } });
  // The Secrets as Argo's docs show them, in Rollgate's namespace; read through the cluster wiring.
  await secret('datadog', { address: dd.address, 'api-key': dd.apiKey, 'app-key': dd.appKey });
  await secret('newrelic', {
    'personal-api-key': nr.apiKey,
    'account-id': String(nr.accountId),
    region: 'us',
    'base-url-nerdgraph': nr.url,
  });
  providers = createClusterMetricProviders(
    harness.clients,
    { allowedHosts: [], deniedHosts: [], jobServiceAccounts: [] },
    OWN_NAMESPACE,
  );
  // Argo's documented shapes: a v2 error percentage from two queries and a formula; an NRQL success rate.
  await createAnalysisTemplate(harness, 'datadog-error-rate', {
    args: [{ name: 'service-name' }],
    metrics: [
      {
        name: 'error-percentage',
        interval: '5s',
        count: 2,
        successCondition: 'default(result, 0) < 5',
        failureLimit: 0,
        provider: {
          datadog: {
            apiVersion: 'v2',
            interval: '5m',
            aggregator: 'sum',
            queries: {
              a: 'sum:requests.errors{service:{{args.service-name}}}.as_count()',
              b: 'sum:requests{service:{{args.service-name}}}.as_count()',
            },
            formula: 'a / b * 100',
          },
        },
      },
    ],
  });
  await createAnalysisTemplate(harness, 'newrelic-success-rate', {
    args: [{ name: 'application-name' }],
    metrics: [
      {
        name: 'success-rate',
        interval: '5s',
        count: 2,
        successCondition: 'result.successRate >= 95',
        provider: {
          newRelic: {
            query: `FROM Transaction SELECT percentage(count(*), WHERE httpResponseCode != 500) as successRate where appName = '{{ args.application-name }}'`,
          },
        },
      },
    ],
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([harness?.stop(), dd?.stop(), nr?.stop()]);
});
afterEach(() => {
  dd.fault = undefined;
  expect(dd.violations).toEqual([]);
  expect(nr.violations).toEqual([]);
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

describe('Datadog', () => {
  it('promotes a canary whose error percentage is low', async () => {
    dd.set(ERRORS('dd-good'), 1);
    dd.set(REQUESTS('dd-good'), 100);
    const key = await canaryWithAnalysis('dd-good', 'datadog-error-rate', 'service-name');
    const before = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).not.toBe(before);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Successful');
    // sum over the window: 2 + 2 errors of 200 + 200 requests.
    expect(run?.status?.metricResults?.[0]?.measurements?.map((m) => m.value)).toEqual(['1', '1']);
  });

  it('aborts a canary whose error percentage is high: Degraded, weight 0, stable kept', async () => {
    dd.set(ERRORS('dd-bad'), 30);
    dd.set(REQUESTS('dd-bad'), 100);
    const key = await canaryWithAnalysis('dd-bad', 'datadog-error-rate', 'service-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, aborted, { timeoutMs: 120_000, providers });
    const observed = await harness.observe(key);
    expect(observed.rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
    expect(run?.status?.metricResults?.[0]?.measurements?.at(-1)?.value).toBe('30');
  });

  it('a rate-limited Datadog (429 on every call) aborts the canary as an Error, never promotes it', async () => {
    dd.set(ERRORS('dd-limited'), 0);
    dd.set(REQUESTS('dd-limited'), 100);
    const key = await canaryWithAnalysis('dd-limited', 'datadog-error-rate', 'service-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    dd.fault = {
      status: 429,
      headers: { 'x-ratelimit-reset': '20' },
      body: '{"errors":["Too many requests"]}',
    };
    await driveUntil(harness, key, aborted, { timeoutMs: 300_000, stepMs: 10_000, providers });
    const observed = await harness.observe(key);
    expect(observed.rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Error');
    const result = run?.status?.metricResults?.[0];
    // consecutiveErrorLimit is Argo's default, 4: the fifth Error in a row ends it.
    expect(result?.consecutiveError).toBe(5);
    expect(result?.measurements?.at(-1)?.message).toContain('HTTP 429 (rate limited): Too many requests');
  });
});

describe('New Relic', () => {
  it('promotes a canary whose success rate is high', async () => {
    nr.rows(NRQL('nr-good'), [{ successRate: 99.5 }]);
    const key = await canaryWithAnalysis('nr-good', 'newrelic-success-rate', 'application-name');
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000, providers });
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.measurements?.[0]?.value).toBe('{"successRate":99.5}');
  });

  it('aborts a canary whose success rate is low', async () => {
    nr.rows(NRQL('nr-bad'), [{ successRate: 61.2 }]);
    const key = await canaryWithAnalysis('nr-bad', 'newrelic-success-rate', 'application-name');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, aborted, { timeoutMs: 120_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
  });
});
