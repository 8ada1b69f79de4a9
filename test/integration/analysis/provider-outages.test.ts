// Provider outages, one table across providers: refused, 500, 429 and a timeout are Error measurements counted against consecutiveErrorLimit — never a crash, never a verdict.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKayentaProvider } from '../../../src/analysis/providers/kayenta-provider.ts';
import {
  createMetricProviderRegistry,
  type MetricProvider,
} from '../../../src/analysis/providers/metric-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import { createSkyWalkingProvider } from '../../../src/analysis/providers/skywalking-provider.ts';
import {
  createWavefrontProvider,
  WAVEFRONT_SECRET,
} from '../../../src/analysis/providers/wavefront-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { startKayentaDouble } from '../../support/kayenta-double.ts';
import { startSkyWalkingDouble } from '../../support/skywalking-double.ts';
import { startWavefrontDouble } from '../../support/wavefront-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
/** Short, so a hanging provider costs the test a second per measurement. */
const TIMEOUT_MS = 1_000;

type Fault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** One provider in the table: its double, healthy data written, and how to measure against an address. */
interface ProviderUnderOutage {
  readonly name: string;
  readonly address: string;
  fault: Fault | undefined;
  readonly violations: readonly string[];
  provider(): MetricProvider;
  /** The metric, measuring every 10 s, two consecutive errors allowed, judged healthy on the written data. */
  metric(address: string): Metric;
  stop(): Promise<void>;
}

const every10s = { interval: '10s', count: 3, consecutiveErrorLimit: 2 } as const;

async function wavefront(): Promise<ProviderUnderOutage> {
  const double = await startWavefrontDouble();
  double.set('ts(success.rate)', 0.99);
  const secrets = staticProviderSecrets({ [WAVEFRONT_SECRET]: { [double.tokenKey]: double.token } });
  return Object.assign(double, {
    name: 'wavefront',
    provider: () => createWavefrontProvider({ secrets, timeoutMs: TIMEOUT_MS }),
    metric: (address: string): Metric => ({
      name: 'success-rate',
      ...every10s,
      successCondition: 'result >= 0.95',
      provider: { wavefront: { address, query: 'ts(success.rate)' } },
    }),
  });
}

async function skywalking(): Promise<ProviderUnderOutage> {
  const double = await startSkyWalkingDouble();
  double.set('service_sla', 'shop', 10_000);
  return Object.assign(double, {
    name: 'skywalking',
    provider: () => createSkyWalkingProvider({ timeoutMs: TIMEOUT_MS }),
    metric: (address: string): Metric => ({
      name: 'sla',
      ...every10s,
      successCondition: 'result.sla.value >= 9900',
      provider: {
        skywalking: {
          address,
          interval: '5m',
          query:
            'query q($duration: Duration!) { sla: readNullableMetricsValue(condition: {name: "service_sla", entity: {serviceName: "shop", normal: true}}, duration: $duration) { value } }',
        },
      },
    }),
  });
}

async function kayenta(): Promise<ProviderUnderOutage> {
  const double = await startKayentaDouble();
  double.addConfig({ name: 'canary-config', application: 'shop', metrics: ['latency'] });
  double.set('version=stable', 'latency', 100);
  double.set('version=canary', 'latency', 100);
  double.pollsUntilComplete = 0;
  return Object.assign(double, {
    name: 'kayenta',
    provider: () => createKayentaProvider({ timeoutMs: TIMEOUT_MS }),
    metric: (address: string): Metric => ({
      name: 'judge',
      ...every10s,
      provider: {
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
      },
    }),
  });
}

const table: ProviderUnderOutage[] = [];
beforeAll(async () => {
  table.push(...(await Promise.all([wavefront(), skywalking(), kayenta()])));
});
afterAll(async () => {
  await Promise.all(table.map((p) => p.stop()));
});
afterEach(() => {
  for (const p of table) {
    p.fault = undefined;
    expect(p.violations, p.name).toEqual([]);
  }
});

const aRun = (m: Metric): AnalysisRun => ({
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'r', namespace: 'shop', uid: 'u' },
  spec: { metrics: [m] },
});

/** Reconciles the run at each requeue (fake time) until it ends; its phase, measurements and waits. */
async function runUntilDone(p: ProviderUnderOutage, address = p.address) {
  const clock = new ManualClock(NOW.getTime());
  const providers = createMetricProviderRegistry([p.provider()]);
  let run = aRun(p.metric(address));
  const waits: number[] = [];
  for (
    let pass = 0;
    pass < 30 && !['Successful', 'Failed', 'Error', 'Inconclusive'].includes(run.status?.phase ?? '');
    pass++
  ) {
    const outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
    run = { ...run, status: outcome.status };
    waits.push(outcome.requeueAfterMs ?? 0);
    clock.advance(outcome.requeueAfterMs ?? 10_000);
  }
  const result = run.status?.metricResults?.[0];
  return { phase: run.status?.phase, result, measurements: result?.measurements ?? [], waits };
}

const byName = (name: string): ProviderUnderOutage => {
  const found = table.find((p) => p.name === name);
  if (found === undefined) throw new Error(`no ${name} in the table`);
  return found;
};
const NAMES = ['wavefront', 'skywalking', 'kayenta'];

describe.each(NAMES)('%s: an outage is an Error counted against consecutiveErrorLimit', (name) => {
  it('healthy, the run passes (the table is judged on real data)', async () => {
    const { phase, measurements } = await runUntilDone(byName(name));
    expect(phase).toBe('Successful');
    expect(measurements.filter((m) => m.phase === 'Successful')).toHaveLength(3);
  });

  it.each([
    ['a 500', { status: 500, body: '{"message":"Internal Server Error"}' } as Fault, /HTTP 500/],
    ['a timeout', 'hang' as Fault, new RegExp(`timed out after ${TIMEOUT_MS} ms`)],
  ])('%s: three Errors in a row end the run in Error', async (_what, fault, message) => {
    const p = byName(name);
    p.fault = fault;
    const { phase, result, measurements } = await runUntilDone(p);
    expect(phase).toBe('Error');
    expect(measurements.map((m) => m.phase)).toEqual(['Error', 'Error', 'Error']);
    expect(measurements[0]?.message).toMatch(message);
    expect(result?.consecutiveError).toBe(3);
  });

  it('connection refused: the same', async () => {
    const p = byName(name);
    const port = await closedLoopbackPort();
    const { phase, measurements } = await runUntilDone(p, `http://127.0.0.1:${port}`);
    expect(phase).toBe('Error');
    expect(measurements).toHaveLength(3);
    expect(measurements[0]?.message).toMatch(/ECONNREFUSED/);
  });

  it('429: an Error that waits as long as Retry-After says before asking again', async () => {
    const p = byName(name);
    p.fault = { status: 429, headers: { 'retry-after': '42' }, body: '{"message":"Too Many Requests"}' };
    const { phase, measurements, waits } = await runUntilDone(p);
    expect(phase).toBe('Error');
    expect(measurements.map((m) => m.phase)).toEqual(['Error', 'Error', 'Error']);
    expect(measurements[0]?.message).toContain('HTTP 429 (rate limited)');
    expect(waits.slice(0, 2)).toEqual([42_000, 42_000]);
  });

  it('back from an outage, the next measurement is judged on the data', async () => {
    const p = byName(name);
    p.fault = { status: 503 };
    const clock = new ManualClock(NOW.getTime());
    const providers = createMetricProviderRegistry([p.provider()]);
    let run = aRun(p.metric(p.address));
    let outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
    run = { ...run, status: outcome.status };
    p.fault = undefined;
    while (run.status?.phase === 'Running') {
      clock.advance(outcome.requeueAfterMs ?? 10_000);
      outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
      run = { ...run, status: outcome.status };
    }
    expect(run.status?.phase).toBe('Successful');
    expect(run.status?.metricResults?.[0]?.measurements?.map((m) => m.phase)).toEqual([
      'Error',
      'Successful',
      'Successful',
      'Successful',
    ]);
  });
});
