// The SkyWalking provider against a double that validates and executes each query against SkyWalking's published GraphQL schema.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createSkyWalkingProvider } from '../../../src/analysis/providers/skywalking-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric, SkyWalkingMetric } from '../../../src/manifest/analysis.ts';
import { startSkyWalkingDouble, type SkyWalkingDouble } from '../../support/skywalking-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 30));
/** The query of Argo's docs, for the service `shop`. */
const APDEX = `query queryData($duration: Duration!) {
  service_apdex: readMetricsValues(
    condition: { name: "service_apdex", entity: { scope: Service, serviceName: "shop", normal: true } },
    duration: $duration) {
      label values { values { value } }
    }
}`;

let sw: SkyWalkingDouble;
beforeAll(async () => {
  sw = await startSkyWalkingDouble();
});
afterAll(async () => {
  await sw?.stop();
});
afterEach(() => {
  expect(sw.violations).toEqual([]);
});

const metric = (skywalking: SkyWalkingMetric, fields: Partial<Metric> = {}): Metric => ({
  name: 'apdex',
  provider: { skywalking },
  ...fields,
});
const aRun = (m: Metric): AnalysisRun => ({
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'r', namespace: 'shop', uid: 'u' },
  spec: { metrics: [m] },
});
const ctx = { now: NOW, logger: silentLogger };

describe('skywalking provider', () => {
  it("runs Argo's documented query over the last interval; the answer's data is the result", async () => {
    sw.set('service_apdex', 'shop', 9950);
    const m = metric(
      { address: sw.address, query: APDEX, interval: '3m' },
      { successCondition: 'all(result.service_apdex.values.values, {asFloat(.value) >= 9900})' },
    );
    const outcome = await reconcileAnalysisRun(aRun(m), {
      providers: createMetricProviderRegistry([createSkyWalkingProvider()]),
      now: NOW,
    });
    const measurement = outcome.status.metricResults?.[0]?.measurements?.[0];
    expect(measurement?.phase).toBe('Successful');
    expect(JSON.parse(measurement?.value ?? '')).toEqual({
      service_apdex: { label: null, values: { values: Array(4).fill({ value: 9950 }) } },
    });
    expect(sw.requests.at(-1)?.body?.variables).toEqual({
      duration: { start: '2026-01-01 1157', end: '2026-01-01 1200', step: 'MINUTE' },
    });
  });

  it('a low apdex fails the measurement', async () => {
    sw.set('service_apdex', 'shop', 7100);
    const m = metric(
      { address: sw.address, query: APDEX, interval: '3m' },
      { successCondition: 'all(result.service_apdex.values.values, {asFloat(.value) >= 9900})' },
    );
    const outcome = await reconcileAnalysisRun(aRun(m), {
      providers: createMetricProviderRegistry([createSkyWalkingProvider()]),
      now: NOW,
    });
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.phase).toBe('Failed');
  });

  it("a query SkyWalking refuses, or an error while reading, is an Error carrying SkyWalking's message", async () => {
    const provider = createSkyWalkingProvider();
    // A field the schema does not have: the double (as the OAP would) answers a GraphQL error.
    const wrong = metric({
      address: sw.address,
      query: 'query q($duration: Duration!) { readMetricsValues(duration: $duration) { label } }',
      interval: '1m',
    });
    const refused = await provider.measure(wrong, aRun(wrong), ctx).catch((e: unknown) => e as Error);
    expect((refused as Error).message).toContain(
      'query failed: Field "readMetricsValues" argument "condition" of type "MetricsCondition!" is required',
    );
    sw.violations.length = 0; // that request was wrong on purpose
    sw.refuse('service_sla', 'Metric service_sla is not defined in OAL');
    const sla = metric({
      address: sw.address,
      query: APDEX.replace('service_apdex"', 'service_sla"'),
      interval: '1m',
    });
    await expect(provider.measure(sla, aRun(sla), ctx)).rejects.toThrow(
      'query failed: Metric service_sla is not defined in OAL',
    );
  });

  it('interval is required and is a duration', async () => {
    const m = metric({ address: sw.address, query: APDEX });
    await expect(createSkyWalkingProvider().measure(m, aRun(m), ctx)).rejects.toThrow('interval:');
  });
});
