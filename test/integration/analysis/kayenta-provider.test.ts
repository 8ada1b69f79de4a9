// The Kayenta provider against a double that checks each request against Kayenta's REST API and judges from written values: started, polled until complete, scored through the thresholds.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createKayentaProvider,
  KAYENTA_POLL_INTERVAL_MS,
} from '../../../src/analysis/providers/kayenta-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { AnalysisRun, KayentaMetric, Metric } from '../../../src/manifest/analysis.ts';
import { startKayentaDouble, type KayentaDouble } from '../../support/kayenta-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const STABLE = 'app=guestbook and rollouts-pod-template-hash=6c54544bf9';
const CANARY = 'app=guestbook and rollouts-pod-template-hash=7d8f9a0b1c';

let kayenta: KayentaDouble;
beforeAll(async () => {
  kayenta = await startKayentaDouble();
  kayenta.addConfig({ name: 'my-test', application: 'guestbook', metrics: ['latency', 'errors'] });
  kayenta.addConfig({ name: 'my-test', application: 'other-app', metrics: [] });
});
afterAll(async () => {
  await kayenta?.stop();
});
beforeEach(() => {
  kayenta.pollsUntilComplete = 1;
});
afterEach(() => {
  kayenta.fault = undefined;
  expect(kayenta.violations).toEqual([]);
});

function spec(fields: Partial<KayentaMetric> = {}): KayentaMetric {
  return {
    address: kayenta.address,
    application: 'guestbook',
    canaryConfigName: 'my-test',
    threshold: { pass: 90, marginal: 75 },
    scopes: [
      {
        name: 'default',
        controlScope: { scope: STABLE, step: 60 },
        experimentScope: { scope: CANARY, step: 60 },
      },
    ],
    ...fields,
  };
}
const metric = (kayentaSpec: KayentaMetric): Metric => ({
  name: 'mann-whitney',
  interval: '1h',
  count: 1,
  provider: { kayenta: kayentaSpec },
});
const aRun = (m: Metric): AnalysisRun => ({
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'r', namespace: 'shop', uid: 'u' },
  spec: { metrics: [m] },
});

/** Reconciles the run until it ends (each pass at the requeue time); returns it and the waits. */
async function judge(m: Metric) {
  const clock = new ManualClock(NOW.getTime());
  const providers = createMetricProviderRegistry([createKayentaProvider({ timeoutMs: 1_000 })]);
  let run = aRun(m);
  const waits: number[] = [];
  for (
    let pass = 0;
    pass < 10 && !['Successful', 'Failed', 'Error', 'Inconclusive'].includes(run.status?.phase ?? '');
    pass++
  ) {
    const outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
    run = { ...run, status: outcome.status };
    waits.push(outcome.requeueAfterMs ?? 0);
    clock.advance(outcome.requeueAfterMs ?? 1_000);
  }
  return { run, waits, measurement: run.status?.metricResults?.[0]?.measurements?.at(-1) };
}

describe('kayenta provider', () => {
  it('starts a judgement, polls it every 15 s until complete, and a score of 100 passes', async () => {
    kayenta.set(STABLE, 'latency', 120);
    kayenta.set(CANARY, 'latency', 125);
    kayenta.set(STABLE, 'errors', 2);
    kayenta.set(CANARY, 'errors', 2);
    kayenta.pollsUntilComplete = 2;
    const before = kayenta.requests.length;
    const { run, waits, measurement } = await judge(metric(spec()));
    expect(run.status?.phase).toBe('Successful');
    expect(measurement?.value).toBe('100');
    expect(measurement?.metadata?.['canaryExecutionId']).toMatch(/^[0-9a-f-]{36}$/);
    expect(waits.slice(0, 3)).toEqual([
      KAYENTA_POLL_INTERVAL_MS,
      KAYENTA_POLL_INTERVAL_MS,
      KAYENTA_POLL_INTERVAL_MS,
    ]);
    const sent = kayenta.requests.slice(before);
    expect(sent.map((r) => r.operation)).toEqual([
      'listAllCanaryConfigs',
      'initiateCanary',
      'getCanaryResults',
      'getCanaryResults',
      'getCanaryResults',
    ]);
    expect(sent[0]?.params.get('application')).toBe('guestbook');
    // The window is the metric's last interval (1h), to the second; region empty as Argo sends it.
    expect(sent[1]?.body).toEqual({
      scopes: {
        default: {
          controlScope: {
            scope: STABLE,
            location: '',
            step: 60,
            start: '2026-01-01T11:00:00Z',
            end: '2026-01-01T12:00:00Z',
          },
          experimentScope: {
            scope: CANARY,
            location: '',
            step: 60,
            start: '2026-01-01T11:00:00Z',
            end: '2026-01-01T12:00:00Z',
          },
        },
      },
      thresholds: { pass: 90, marginal: 75 },
    });
  });

  it('a score between marginal and pass is Inconclusive; below marginal Failed', async () => {
    kayenta.set(STABLE, 'latency', 120);
    kayenta.set(CANARY, 'latency', 240);
    kayenta.set(STABLE, 'errors', 2);
    kayenta.set(CANARY, 'errors', 2);
    const half = await judge(metric(spec({ threshold: { pass: 90, marginal: 50 } })));
    expect([half.measurement?.value, half.measurement?.phase]).toEqual(['50', 'Inconclusive']);
    const low = await judge(metric(spec()));
    expect([low.measurement?.value, low.measurement?.phase]).toEqual(['50', 'Failed']);
    expect(low.run.status?.phase).toBe('Failed');
  });

  it('explicit start/end and account names are sent; thresholds (as Argo’s docs spell it) is read too', async () => {
    kayenta.set(STABLE, 'latency', 1);
    kayenta.set(CANARY, 'latency', 1);
    kayenta.set(STABLE, 'errors', 0);
    kayenta.set(CANARY, 'errors', 0);
    const window = { start: '2026-01-01T10:00:00Z', end: '2026-01-01T10:30:00Z' };
    const before = kayenta.requests.length;
    const { measurement } = await judge(
      metric(
        spec({
          threshold: undefined,
          thresholds: { pass: 95, marginal: 80 },
          metricsAccountName: 'prometheus-account',
          configurationAccountName: 'config-store',
          storageAccountName: 'result-store',
          scopes: [
            {
              name: 'default',
              controlScope: { scope: STABLE, step: 30, region: 'us-east-1', ...window },
              experimentScope: { scope: CANARY, step: 30, region: 'us-east-1', ...window },
            },
          ],
        }),
      ),
    );
    expect(measurement?.phase).toBe('Successful');
    const started = kayenta.requests.slice(before).find((r) => r.operation === 'initiateCanary');
    expect(Object.fromEntries(started?.params ?? [])).toEqual({
      application: 'guestbook',
      metricsAccountName: 'prometheus-account',
      configurationAccountName: 'config-store',
      storageAccountName: 'result-store',
    });
    expect((started?.body as { thresholds: unknown }).thresholds).toEqual({ pass: 95, marginal: 80 });
  });

  it("an unknown config or account is an Error with Kayenta's message", async () => {
    const noConfig = await judge(metric(spec({ canaryConfigName: 'nope' })));
    expect(noConfig.measurement?.phase).toBe('Error');
    expect(noConfig.measurement?.message).toContain(
      'canary config "nope" not found for application "guestbook"',
    );
    const noAccount = await judge(metric(spec({ metricsAccountName: 'datadog-account' })));
    expect(noAccount.measurement?.message).toContain('HTTP 400: Unable to resolve account datadog-account.');
  });
});
