// The New Relic provider against a NerdGraph double that checks each GraphQL request's shape and answers NRQL from written rows.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHostPolicy } from '../../../src/analysis/providers/host-policy.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createNewRelicProvider } from '../../../src/analysis/providers/new-relic-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric, NewRelicMetric } from '../../../src/manifest/analysis.ts';
import { startNewRelicDouble, type NewRelicDouble } from '../../support/newrelic-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const SUCCESS =
  "FROM Transaction SELECT percentage(count(*), WHERE httpResponseCode != 500) as successRate where appName = 'shop'";

let nr: NewRelicDouble;
beforeAll(async () => {
  nr = await startNewRelicDouble();
});
afterAll(async () => {
  await nr?.stop();
});
afterEach(() => {
  nr.fault = undefined;
  expect(nr.violations).toEqual([]);
});

function profile(extra: Record<string, string> = {}) {
  return {
    'personal-api-key': nr.apiKey,
    'account-id': String(nr.accountId),
    'base-url-nerdgraph': nr.url,
    ...extra,
  };
}

function provider(secrets: Record<string, Record<string, string>> = { newrelic: profile() }) {
  return createNewRelicProvider({ secrets: staticProviderSecrets(secrets) });
}

function metric(newRelic: NewRelicMetric, fields: Partial<Metric> = {}): Metric {
  return { name: 'success-rate', provider: { newRelic }, ...fields };
}

function aRun(m: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'shop', uid: 'u' },
    spec: { metrics: [m] },
  };
}

const ctx = { now: NOW, logger: silentLogger };

describe('new relic provider: NRQL through NerdGraph', () => {
  it('one row is the result, a map its conditions read by name; the query sent is recorded', async () => {
    nr.rows(SUCCESS, [{ successRate: 99.2 }]);
    const m = metric({ query: SUCCESS }, { successCondition: 'result.successRate >= 95' });
    const answer = await provider().measure(m, aRun(m), ctx);
    expect(answer.value).toEqual({ successRate: 99.2 });
    expect(answer.raw).toBe('{"successRate":99.2}');
    expect(answer.metadata).toEqual({ ResolvedNewRelicQuery: SUCCESS });
    const sent = nr.requests.at(-1);
    expect(sent?.apiKey).toBe(nr.apiKey);
    expect(sent?.body?.variables).toEqual({ query: SUCCESS, accountId: nr.accountId, timeout: 5 });
    const outcome = await reconcileAnalysisRun(aRun(m), {
      providers: createMetricProviderRegistry([provider()]),
      now: NOW,
    });
    expect(outcome.status.phase).toBe('Successful');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.metadata).toEqual({
      ResolvedNewRelicQuery: SUCCESS,
    });
  });

  it("several rows are a list; a function's name is its key (result['average.duration'])", async () => {
    const facet = 'SELECT average(duration) FROM Transaction FACET host SINCE 5 minutes ago';
    nr.rows(facet, [
      { host: 'a', 'average.duration': 0.12 },
      { host: 'b', 'average.duration': 0.31 },
    ]);
    const m = metric(
      { query: facet, timeout: 30 },
      { successCondition: "all(result, {#['average.duration'] < 0.25})" },
    );
    const outcome = await reconcileAnalysisRun(aRun(m), {
      providers: createMetricProviderRegistry([provider()]),
      now: NOW,
    });
    expect(outcome.status.phase).toBe('Failed');
    expect(nr.requests.at(-1)?.body?.variables?.['timeout']).toBe(30);
  });

  it("no row is an error; an NRQL error is an Error carrying New Relic's message", async () => {
    const m = metric({ query: 'SELECT count(*) FROM Nothing' });
    await expect(provider().measure(m, aRun(m), ctx)).rejects.toThrow('no results returned from NRQL query');
    nr.refuse(
      'SELEC count(*) FROM Transaction',
      "NRQL Syntax Error: Error at line 1 position 1, unexpected 'SELEC'",
    );
    const bad = metric({ query: 'SELEC count(*) FROM Transaction' }, { consecutiveErrorLimit: 0 });
    const outcome = await reconcileAnalysisRun(aRun(bad), {
      providers: createMetricProviderRegistry([provider()]),
      now: NOW,
    });
    expect(outcome.status.phase).toBe('Error');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.message).toBe(
      `newRelic metric "success-rate": NRQL query failed: NRQL Syntax Error: Error at line 1 position 1, unexpected 'SELEC'`,
    );
  });
});

describe('new relic provider: the profile Secret', () => {
  const m = metric({ query: SUCCESS });
  beforeAll(() => nr.rows(SUCCESS, [{ successRate: 99 }]));

  it('`profile` names another Secret; without base-url-nerdgraph the region picks the US or EU endpoint', async () => {
    const named = metric({ query: SUCCESS, profile: 'newrelic-eu' });
    expect((await provider({ 'newrelic-eu': profile() }).measure(named, aRun(named), ctx)).value).toEqual({
      successRate: 99,
    });
    // Only loopback may be reached here, so the endpoint chosen shows in the error and nothing leaves the machine.
    const loopback = createHostPolicy({ allowedHosts: ['127.0.0.1'] });
    for (const [region, host] of [
      ['eu', 'api.eu.newrelic.com'],
      ['us', 'api.newrelic.com'],
      ['', 'api.newrelic.com'],
    ]) {
      const secrets = staticProviderSecrets({
        newrelic: { 'personal-api-key': nr.apiKey, 'account-id': '1', ...(region && { region }) },
      });
      await expect(
        createNewRelicProvider({ secrets, policy: loopback }).measure(m, aRun(m), ctx),
      ).rejects.toThrow(`request to https://${host} `);
    }
  });

  it('a missing Secret, key or a bad account id is an error naming it; the key is never shown', async () => {
    await expect(provider({}).measure(m, aRun(m), ctx)).rejects.toThrow(
      "Secret newrelic in Rollgate's namespace not found",
    );
    await expect(
      provider({ newrelic: { 'personal-api-key': 'k' } }).measure(m, aRun(m), ctx),
    ).rejects.toThrow('has no account-id');
    await expect(
      provider({ newrelic: profile({ 'account-id': 'acme' }) }).measure(m, aRun(m), ctx),
    ).rejects.toThrow('account-id is not a number');
    await expect(provider({ newrelic: profile({ region: 'ap' }) }).measure(m, aRun(m), ctx)).rejects.toThrow(
      'region must be "us" or "eu"',
    );
    const wrong = 'NRAK-WRONGKEY000000000000000000';
    const error = await provider({ newrelic: profile({ 'personal-api-key': wrong }) })
      .measure(m, aRun(m), ctx)
      .catch((e: unknown) => e as Error);
    expect((error as Error).message).toContain('HTTP 401: Invalid API key');
    expect((error as Error).message).not.toContain(wrong);
  });
});

describe('new relic provider: a proxy’s page for an answer', () => {
  async function runUntilDone(p = provider()) {
    const clock = new ManualClock(NOW.getTime());
    const m = metric(
      { query: SUCCESS },
      { interval: '10s', consecutiveErrorLimit: 2, successCondition: 'result.successRate >= 95' },
    );
    let run = aRun(m);
    const waits: number[] = [];
    for (
      let pass = 0;
      pass < 20 && !['Successful', 'Failed', 'Error'].includes(run.status?.phase ?? '');
      pass++
    ) {
      const outcome = await reconcileAnalysisRun(run, {
        providers: createMetricProviderRegistry([p]),
        now: clock.now(),
      });
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

  beforeAll(() => nr.rows(SUCCESS, [{ successRate: 99 }]));

  // 500, 429, timeout, connection refused: the table in provider-outages.test.ts.
  it.each([
    [
      'a 502 from a proxy',
      { status: 502, body: '<html>Bad Gateway</html>' },
      /HTTP 502: <html>Bad Gateway<\/html>/,
    ],
  ])('%s: Error after consecutiveErrorLimit (2) is passed', async (_name, fault, message) => {
    nr.fault = fault;
    const { phase, measurements } = await runUntilDone();
    expect(phase).toBe('Error');
    expect(measurements.map((x) => x.phase)).toEqual(['Error', 'Error', 'Error']);
    expect(measurements[0]?.message).toMatch(message);
  });
});
