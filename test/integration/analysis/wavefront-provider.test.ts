// The Wavefront provider against a double that checks each request against Wavefront's published queryApi and answers from written points.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import {
  createWavefrontProvider,
  WAVEFRONT_SECRET,
} from '../../../src/analysis/providers/wavefront-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric, WavefrontMetric } from '../../../src/manifest/analysis.ts';
import { startWavefrontDouble, type WavefrontDouble } from '../../support/wavefront-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const NOW_S = NOW.getTime() / 1000;
const SUCCESS_RATE =
  'sum(rate(5m, ts("istio.requestcount.count", response_code!=500 and destination_service="shop"))) / sum(rate(5m, ts("istio.requestcount.count", reporter=client and destination_service="shop")))';

let wf: WavefrontDouble;
beforeAll(async () => {
  wf = await startWavefrontDouble();
});
afterAll(async () => {
  await wf?.stop();
});
afterEach(() => {
  expect(wf.violations).toEqual([]);
});

const tokens = (token = wf.token) => ({ [WAVEFRONT_SECRET]: { [wf.tokenKey]: token } });
const provider = (secrets: Record<string, Record<string, string>> = tokens()) =>
  createWavefrontProvider({ secrets: staticProviderSecrets(secrets) });
const metric = (wavefront: WavefrontMetric, fields: Partial<Metric> = {}): Metric => ({
  name: 'success-rate',
  provider: { wavefront },
  ...fields,
});
const aRun = (m: Metric): AnalysisRun => ({
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'r', namespace: 'shop', uid: 'u' },
  spec: { metrics: [m] },
});
const ctx = { now: NOW, logger: silentLogger };

describe('wavefront provider', () => {
  it('asks for the instant of the measurement and takes the point nearest it, as Argo does', async () => {
    wf.write(SUCCESS_RATE, [
      {
        label: 'shop',
        points: [
          [NOW_S - 120, 0.5],
          [NOW_S - 20, 0.97],
          [NOW_S + 300, 0.1],
        ],
      },
    ]);
    const m = metric({ address: wf.address, query: SUCCESS_RATE });
    const answer = await provider().measure(m, aRun(m), ctx);
    expect(answer).toEqual({
      value: 0.97,
      raw: '0.97',
      metadata: { timestamps: String(NOW_S - 20), drift: '-20' },
    });
    const request = wf.requests.at(-1);
    expect(Object.fromEntries(request?.params ?? [])).toEqual({
      q: SUCCESS_RATE,
      s: String(NOW.getTime()),
      e: String(NOW.getTime()),
      g: 's',
      p: '1',
      i: 'true',
    });
    expect(request?.authorization).toBe(`Bearer ${wf.token}`);
  });

  it('several series are a list (all(result, # >= 0.95)), values stored with two decimals', async () => {
    wf.write('ts(latency, env=prod)', [
      { label: 'a', value: 0.991 },
      { label: 'b', value: 0.9 },
    ]);
    const m = metric(
      { address: wf.address, query: 'ts(latency, env=prod)' },
      { successCondition: 'all(result, # >= 0.95)' },
    );
    const outcome = await reconcileAnalysisRun(aRun(m), {
      providers: createMetricProviderRegistry([provider()]),
      now: NOW,
    });
    const measurement = outcome.status.metricResults?.[0]?.measurements?.[0];
    expect(measurement?.value).toBe('[0.99,0.90]');
    expect(measurement?.phase).toBe('Failed');
    expect(measurement?.metadata).toEqual({ timestamps: `[${NOW_S},${NOW_S}]`, drift: '[0,0]' });
  });

  it("no series, or Wavefront's own query error, is an Error with its text", async () => {
    wf.refuse('ts(', 'SyntaxError', 'Missing expression : ts(');
    for (const [query, message] of [
      ['ts(nothing.here)', 'no time series found in the answer'],
      ['ts(', 'query failed: SyntaxError: Missing expression : ts('],
    ] as const) {
      const m = metric({ address: wf.address, query });
      await expect(provider().measure(m, aRun(m), ctx)).rejects.toThrow(message);
    }
  });

  it('the token is the key named as the address in wavefront-api-tokens; a wrong one is 401, never shown', async () => {
    wf.set('ts(up)', 1);
    const m = metric({ address: wf.address, query: 'ts(up)' });
    await expect(provider({}).measure(m, aRun(m), ctx)).rejects.toThrow(
      "Secret wavefront-api-tokens in Rollgate's namespace not found",
    );
    await expect(
      provider({ [WAVEFRONT_SECRET]: { 'other.wavefront.com': wf.token } }).measure(m, aRun(m), ctx),
    ).rejects.toThrow('has no token for 127.0.0.1');
    const error = await provider(tokens('revoked-token-9f2c'))
      .measure(m, aRun(m), ctx)
      .catch((e: unknown) => e as Error);
    expect((error as Error).message).toContain('HTTP 401: Unauthorized');
    expect((error as Error).message).not.toContain('revoked-token-9f2c');
  });

  it('an address as Argo writes it (a host) is reached over https; plain http only on a loopback host', async () => {
    const m = metric({ address: 'http://wavefront.example.com', query: 'ts(up)' });
    await expect(provider().measure(m, aRun(m), ctx)).rejects.toThrow('address must be https');
  });
});
