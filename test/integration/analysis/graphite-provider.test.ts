// The graphite provider against a REAL Graphite (Debian's carbon-cache + graphite-web), and its outages against a stub.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphiteProvider } from '../../../src/analysis/providers/graphite-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { startGraphite, type TestGraphite } from '../../support/graphite.ts';

const provider = createGraphiteProvider();
const registry = createMetricProviderRegistry([provider]);
const ctx = { now: new Date(), logger: silentLogger };

function metric(address: string, query: string, fields: Partial<Metric> = {}): Metric {
  return { name: 'success-rate', provider: { graphite: { address, query } }, ...fields };
}

function aRun(m: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'shop', uid: 'u' },
    spec: { metrics: [m] },
  };
}

describe('graphite provider against a real carbon-cache + graphite-web', () => {
  let graphite: TestGraphite;
  beforeAll(async () => {
    graphite = await startGraphite();
    const now = Math.floor(Date.now() / 1000);
    await graphite.write([
      { path: 'shop.canary.success', value: 99.5, at: now - 2 },
      { path: 'shop.canary.success', value: 97.25, at: now - 1 },
      { path: 'shop.bad.success', value: 62, at: now - 1 },
    ]);
    await graphite.waitFor('shop.canary.success', (v) => v.length === 2);
    await graphite.waitFor('shop.bad.success', (v) => v.length === 1);
  }, 60_000);
  afterAll(async () => {
    await graphite?.stop();
  });

  it("the first target's values, nulls left out, stored with six decimals as Argo stores them", async () => {
    const m = metric(graphite.address, 'target=shop.canary.success&from=-5min');
    const answer = await provider.measure(m, aRun(m), ctx);
    expect(answer).toEqual({ value: [99.5, 97.25], raw: '[99.500000,97.250000]' });
  });

  it('a query written over several lines (whitespace removed, as Argo does) is one render call', async () => {
    const m = metric(
      graphite.address,
      `target=summarize(
         shop.canary.success,
         '10min',
         'avg'
       )&from=-10min`,
    );
    const answer = await provider.measure(m, aRun(m), ctx);
    expect((answer.value as number[]).at(-1)).toBeCloseTo(98.375);
  });

  it('a canary is Successful on good points and Failed on bad ones', async () => {
    const judge = (path: string) =>
      reconcileAnalysisRun(
        aRun(
          metric(graphite.address, `target=${path}&from=-5min`, { successCondition: 'all(result, # >= 90)' }),
        ),
        { providers: registry, now: new Date() },
      );
    expect((await judge('shop.canary.success')).status.phase).toBe('Successful');
    expect((await judge('shop.bad.success')).status.phase).toBe('Failed');
  });

  it("Graphite's own message for a bad query; no target is `no values found`", async () => {
    const bad = metric(graphite.address, 'target=nosuchfunction(shop.canary.success)');
    await expect(provider.measure(bad, aRun(bad), ctx)).rejects.toThrow(
      'HTTP 400: Invalid parameters (Received request for unknown function: nosuchfunction)',
    );
    const none = metric(graphite.address, 'target=shop.nothing.here&from=-5min');
    await expect(provider.measure(none, aRun(none), ctx)).rejects.toThrow('no values found');
  });
});

describe('graphite provider outages: errors counted against consecutiveErrorLimit, never a verdict', () => {
  let server: Server;
  let address: string;
  let answer: { status: number; headers?: Record<string, string>; body: string } | 'hang' = 'hang';
  beforeAll(async () => {
    server = createServer((_req, res) => {
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const a = server.address();
    address = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function runUntilDone(at: string, limit = 2) {
    const clock = new ManualClock(Date.now());
    const m = metric(at, 'target=shop.canary.success', {
      interval: '10s',
      consecutiveErrorLimit: limit,
      successCondition: 'all(result, # >= 90)',
    });
    let run = aRun(m);
    const waits: number[] = [];
    for (
      let pass = 0;
      pass < 20 && !['Successful', 'Failed', 'Error'].includes(run.status?.phase ?? '');
      pass++
    ) {
      const outcome = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
      run = { ...run, status: outcome.status };
      waits.push(outcome.requeueAfterMs ?? 0);
      clock.advance(outcome.requeueAfterMs ?? 10_000);
    }
    return {
      phase: run.status?.phase,
      measurements: run.status?.metricResults?.[0]?.measurements ?? [],
      waits,
    };
  }

  it('a 500', async () => {
    answer = { status: 500, body: 'Internal Server Error' };
    const { phase, measurements } = await runUntilDone(address);
    expect(phase).toBe('Error');
    expect(measurements.map((m) => m.phase)).toEqual(['Error', 'Error', 'Error']);
    expect(measurements[0]?.message).toContain('HTTP 500: Internal Server Error');
  });

  it('429: waits for Retry-After between tries', async () => {
    answer = { status: 429, headers: { 'retry-after': '15' }, body: 'slow down' };
    const { phase, measurements, waits } = await runUntilDone(address);
    expect(phase).toBe('Error');
    expect(measurements[0]?.message).toContain('HTTP 429 (rate limited): slow down');
    expect(waits.slice(0, 2)).toEqual([15_000, 15_000]);
  });

  it('connection refused', async () => {
    const { phase, measurements } = await runUntilDone(`http://127.0.0.1:${await closedLoopbackPort()}`);
    expect(phase).toBe('Error');
    expect(measurements[0]?.message).toMatch(/ECONNREFUSED/);
  });

  it("a timeout (Argo's 10 s)", async () => {
    answer = 'hang';
    const { phase, measurements } = await runUntilDone(address, 0);
    expect(phase).toBe('Error');
    expect(measurements[0]?.message).toMatch(/timed out after 10000 ms/);
  }, 30_000);
});
