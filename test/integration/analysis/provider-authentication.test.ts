// Metric provider authentication against doubles that check it for real: SigV4 recomputed by an independent verifier, OAuth2 from a real token server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrometheusProvider } from '../../../src/analysis/providers/prometheus-provider.ts';
import { createWebProvider } from '../../../src/analysis/providers/web-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createOAuth2TokenSource } from '../../../src/analysis/providers/oauth2-token-source.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import {
  startGuardedMetricsServer,
  type GuardedMetricsServer,
} from '../../support/guarded-metrics-server.ts';
import { startOAuth2TokenServer, type TestOAuth2Server } from '../../support/oauth2-token-server.ts';
import { sigv4Refusal } from '../../support/sigv4-verifier.ts';

const KEY = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const SESSION = 'FQoGZXIvYXdzEXAMPLEsessionTOKEN';
const REGION = 'eu-west-1';
const CLIENT = { clientId: 'rollgate', clientSecret: 's3cr3t-client-value' };
const T0 = new Date(Date.UTC(2026, 0, 1));

function aRun(metric: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'default', uid: 'u' },
    spec: { metrics: [metric] },
  };
}

const ctx = (now = T0) => ({ now, logger: silentLogger });

describe('sigv4 (Amazon Managed Prometheus)', () => {
  let amp: GuardedMetricsServer;
  beforeAll(async () => {
    amp = await startGuardedMetricsServer(async (request) => {
      const refusal = sigv4Refusal(request, {
        ...KEY,
        sessionToken: SESSION,
        region: REGION,
        service: 'aps',
      });
      return refusal === undefined ? undefined : { status: 403, reason: refusal };
    });
    amp.value = 0.99;
  });
  afterAll(async () => amp?.close());

  const metric = (sigv4?: Record<string, string>): Metric => ({
    name: 'rate',
    successCondition: 'result[0] > 0.9',
    provider: {
      prometheus: {
        address: `${amp.url}/workspaces/ws-0a1b2c`,
        query: 'sum(rate(http_requests_total{code!~"5.."}[5m]))',
        ...(sigv4 && { authentication: { sigv4 } }),
      },
    },
  });
  const env = {
    AWS_ACCESS_KEY_ID: KEY.accessKeyId,
    AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey,
    AWS_SESSION_TOKEN: SESSION,
  };

  it('signs the query so the verifier accepts it; unsigned, the endpoint answers 403 and the run is Error', async () => {
    const registry = createMetricProviderRegistry([createPrometheusProvider({ env })]);
    const signed = await reconcileAnalysisRun(aRun(metric({ region: REGION })), {
      providers: registry,
      now: T0,
    });
    expect(signed.status.phase).toBe('Successful');
    expect(amp.requests.at(-1)).toMatchObject({ allowed: true, url: '/workspaces/ws-0a1b2c/api/v1/query' });

    const unsigned = await reconcileAnalysisRun(aRun({ ...metric(), consecutiveErrorLimit: 0 }), {
      providers: registry,
      now: T0,
    });
    expect(unsigned.status.phase).toBe('Error');
    expect(unsigned.status.metricResults?.[0]?.measurements?.[0]?.message).toMatch(/HTTP 403/);
  });

  it('signs range queries too', async () => {
    const provider = createPrometheusProvider({ env });
    const m = metric({});
    const ranged: Metric = {
      ...m,
      provider: {
        prometheus: {
          ...m.provider.prometheus!,
          authentication: { sigv4: { region: REGION } },
          rangeQuery: { start: 'now() - duration("10m")', end: 'now()', step: '1m' },
        },
      },
    };
    const answer = await provider.measure(ranged, aRun(ranged), ctx());
    expect(answer.value).toEqual([0.99, 0.99]);
    expect(amp.requests.at(-1)).toMatchObject({
      allowed: true,
      url: '/workspaces/ws-0a1b2c/api/v1/query_range',
    });
  });

  it('a wrong secret key is refused by the verifier: an Error measurement that does not show the key', async () => {
    const wrong = 'not-the-right-secret-key-value';
    const registry = createMetricProviderRegistry([
      createPrometheusProvider({ env: { ...env, AWS_SECRET_ACCESS_KEY: wrong } }),
    ]);
    const outcome = await reconcileAnalysisRun(
      aRun({ ...metric({ region: REGION }), consecutiveErrorLimit: 0 }),
      {
        providers: registry,
        now: T0,
      },
    );
    expect(outcome.status.phase).toBe('Error');
    expect(JSON.stringify(outcome.status)).not.toContain(wrong);
    expect(amp.requests.at(-1)?.allowed).toBe(false);
  });

  it('without credentials in the environment the measurement says which variables to set', async () => {
    const provider = createPrometheusProvider({ env: {} });
    await expect(provider.measure(metric({ region: REGION }), aRun(metric()), ctx())).rejects.toThrow(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
  });
});

describe('oauth2 client credentials', () => {
  let tokens: TestOAuth2Server;
  let api: GuardedMetricsServer;
  beforeAll(async () => {
    tokens = await startOAuth2TokenServer([CLIENT], 600);
    api = await startGuardedMetricsServer(async (request) => {
      const header = request.headers['authorization'];
      const ok = await tokens.verify(typeof header === 'string' ? header : undefined);
      return ok ? undefined : { status: 401, reason: 'invalid token' };
    });
    api.value = 1;
  });
  afterAll(async () => {
    await api?.close();
    await tokens?.close();
  });

  const oauth2 = (clientSecret = CLIENT.clientSecret) => ({
    tokenUrl: tokens.tokenUrl,
    clientId: CLIENT.clientId,
    clientSecret,
    scopes: ['metrics:read', 'metrics:list'],
  });
  const promMetric = (withAuth = true, clientSecret?: string): Metric => ({
    name: 'rate',
    successCondition: 'result[0] == 1',
    provider: {
      prometheus: {
        address: api.url,
        query: 'up',
        ...(withAuth && { authentication: { oauth2: oauth2(clientSecret) } }),
      },
    },
  });

  it('fetches one token (with the scopes), reuses it until it expires, then fetches another', async () => {
    const provider = createPrometheusProvider({ tokens: createOAuth2TokenSource() });
    const before = tokens.tokenRequests;
    await provider.measure(promMetric(), aRun(promMetric()), ctx());
    await provider.measure(promMetric(), aRun(promMetric()), ctx(new Date(T0.getTime() + 60_000)));
    expect(tokens.tokenRequests - before).toBe(1);
    expect(tokens.lastScope).toBe('metrics:read metrics:list');
    // 600 s lifetime, renewed 10 s early.
    await provider.measure(promMetric(), aRun(promMetric()), ctx(new Date(T0.getTime() + 591_000)));
    expect(tokens.tokenRequests - before).toBe(2);
    expect(api.requests.slice(-3).every((r) => r.allowed)).toBe(true);
  });

  it('metrics measured at the same time share one token request', async () => {
    const provider = createPrometheusProvider({ tokens: createOAuth2TokenSource() });
    const before = tokens.tokenRequests;
    const answers = await Promise.all(
      [1, 2, 3].map(() => provider.measure(promMetric(), aRun(promMetric()), ctx())),
    );
    expect(answers.map((a) => a.value)).toEqual([[1], [1], [1]]);
    expect(tokens.tokenRequests - before).toBe(1);
  });

  it('a token the server no longer accepts (401) is replaced and the query retried once', async () => {
    const provider = createPrometheusProvider({ tokens: createOAuth2TokenSource() });
    await provider.measure(promMetric(), aRun(promMetric()), ctx());
    const before = tokens.tokenRequests;
    tokens.revokeAll();
    const answer = await provider.measure(promMetric(), aRun(promMetric()), ctx());
    expect(answer.value).toEqual([1]);
    expect(tokens.tokenRequests - before).toBe(1);
    expect(api.requests.slice(-2).map((r) => r.allowed)).toEqual([false, true]);
  });

  it('without authentication the endpoint answers 401: the run is Error', async () => {
    const registry = createMetricProviderRegistry([createPrometheusProvider()]);
    const outcome = await reconcileAnalysisRun(aRun({ ...promMetric(false), consecutiveErrorLimit: 0 }), {
      providers: registry,
      now: T0,
    });
    expect(outcome.status.phase).toBe('Error');
  });

  it('a refused client is an Error naming the token endpoint’s error code, never the secret', async () => {
    const wrong = 'wrong-client-secret-value';
    const registry = createMetricProviderRegistry([createPrometheusProvider()]);
    const outcome = await reconcileAnalysisRun(
      aRun({ ...promMetric(true, wrong), consecutiveErrorLimit: 0 }),
      {
        providers: registry,
        now: T0,
      },
    );
    expect(outcome.status.phase).toBe('Error');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.message).toMatch(/HTTP 401 invalid_client/);
    expect(JSON.stringify(outcome.status)).not.toContain(wrong);
  });

  it('the web provider sends the token as Bearer: Successful with it, Error (401) without', async () => {
    const web = (withAuth: boolean): Metric => ({
      name: 'status',
      successCondition: 'result == 1',
      consecutiveErrorLimit: 0,
      provider: {
        web: {
          url: `${api.url}/api/status`,
          jsonPath: '{$.data.value}',
          ...(withAuth && { authentication: { oauth2: oauth2() } }),
        },
      },
    });
    const registry = createMetricProviderRegistry([createWebProvider()]);
    expect((await reconcileAnalysisRun(aRun(web(true)), { providers: registry, now: T0 })).status.phase).toBe(
      'Successful',
    );
    const without = await reconcileAnalysisRun(aRun(web(false)), { providers: registry, now: T0 });
    expect(without.status.phase).toBe('Error');
    expect(without.status.metricResults?.[0]?.measurements?.[0]?.message).toMatch(
      /non 2xx response code: 401/,
    );
  });
});

describe('basicAuth (Grafana Cloud)', () => {
  let grafana: GuardedMetricsServer;
  const expected = `Basic ${Buffer.from('12345:glc_token-value').toString('base64')}`;
  beforeAll(async () => {
    grafana = await startGuardedMetricsServer(async (request) =>
      request.headers['authorization'] === expected ? undefined : { status: 401, reason: 'unauthorized' },
    );
    grafana.value = 1;
  });
  afterAll(async () => grafana?.close());

  it('sends username and password as HTTP Basic; with a wrong password the run is Error without it', async () => {
    const metric = (password: string): Metric => ({
      name: 'rate',
      successCondition: 'result[0] == 1',
      consecutiveErrorLimit: 0,
      provider: {
        prometheus: {
          address: grafana.url,
          query: 'up',
          authentication: { basicAuth: { username: '12345', password } },
        },
      },
    });
    const registry = createMetricProviderRegistry([createPrometheusProvider()]);
    const ok = await reconcileAnalysisRun(aRun(metric('glc_token-value')), { providers: registry, now: T0 });
    expect(ok.status.phase).toBe('Successful');
    const wrong = await reconcileAnalysisRun(aRun(metric('wrong-password-value')), {
      providers: registry,
      now: T0,
    });
    expect(wrong.status.phase).toBe('Error');
    expect(JSON.stringify(wrong.status)).not.toContain('wrong-password-value');
  });
});
