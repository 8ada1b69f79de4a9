// End to end (sandbox): a canary's analysis step with a range query (real Prometheus), SigV4 and OAuth2 — each outcome differs without the feature.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDefaultMetricProviders } from '../../../src/analysis/providers/index.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import {
  startGuardedMetricsServer,
  type GuardedMetricsServer,
} from '../../support/guarded-metrics-server.ts';
import { startOAuth2TokenServer, type TestOAuth2Server } from '../../support/oauth2-token-server.ts';
import { startPrometheus, type TestPrometheus } from '../../support/prometheus.ts';
import { sigv4Refusal } from '../../support/sigv4-verifier.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import { ReconcileHarness, analysisRunsOf, createAnalysisTemplate, driveUntil } from './analysis-harness.ts';

const KEY = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'e2e/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const REGION = 'us-east-1';
const CLIENT = { clientId: 'rollgate-e2e', clientSecret: 'e2e-client-secret-value' };
const env = { AWS_ACCESS_KEY_ID: KEY.accessKeyId, AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey };
const providers = createDefaultMetricProviders({ prometheus: { env } });

const aborted = (o: ObservedState): boolean => o.rollout.status?.phase === 'Degraded';

let harness: ReconcileHarness;
let prometheus: TestPrometheus;
let amp: GuardedMetricsServer;
let tokens: TestOAuth2Server;
let api: GuardedMetricsServer;

beforeAll(async () => {
  // The clock starts at the real time: range queries ask the real Prometheus about the last minute.
  harness = await ReconcileHarness.start({ seed: 31, clock: new ManualClock(Date.now()) });
  prometheus = await startPrometheus();
  amp = await startGuardedMetricsServer(async (request) => {
    const refusal = sigv4Refusal(request, { ...KEY, region: REGION, service: 'aps' });
    return refusal === undefined ? undefined : { status: 403, reason: refusal };
  });
  tokens = await startOAuth2TokenServer([CLIENT]);
  api = await startGuardedMetricsServer(async (request) => {
    const header = request.headers['authorization'];
    return (await tokens.verify(typeof header === 'string' ? header : undefined))
      ? undefined
      : { status: 401, reason: 'invalid token' };
  });
}, 90_000);
afterAll(async () => {
  await harness?.stop();
  await prometheus?.stop();
  await amp?.close();
  await api?.close();
  await tokens?.close();
});

/** A rollout promoted at app:1.0 whose canary runs `template` after 25 %, then moved to app:2.0. */
async function canaryWith(name: string, template: string): Promise<RolloutKey> {
  const object = testRollout({
    name,
    replicas: 2,
    steps: [{ setWeight: 25 }, { analysis: { templates: [{ templateName: template }] } }, { setWeight: 50 }],
  });
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

async function lastRunPhase(key: RolloutKey): Promise<string | undefined> {
  return (await analysisRunsOf(harness, key)).at(-1)?.status?.phase;
}

describe('analysis authentication and range queries in a canary (sandbox)', () => {
  it('rangeQuery: a latency that was bad a minute ago fails the step (an instant query would pass)', async () => {
    prometheus.exporter.set('e2e_latency_ms', 3000);
    await prometheus.waitFor('e2e_latency_ms', (v) => v[0] === 3000);
    prometheus.exporter.set('e2e_latency_ms', 120);
    await prometheus.waitFor('e2e_latency_ms', (v) => v[0] === 120);
    const metric = (rangeQuery?: Record<string, string>) => ({
      name: 'latency',
      successCondition: 'all(result, # < 1000)',
      provider: {
        prometheus: {
          address: prometheus.address,
          query: 'e2e_latency_ms',
          ...(rangeQuery && { rangeQuery }),
        },
      },
    });
    await createAnalysisTemplate(harness, 'latency-instant', { metrics: [metric()] });
    await createAnalysisTemplate(harness, 'latency-range', {
      metrics: [metric({ start: 'now() - duration("10m")', end: 'now()', step: '1s' })],
    });
    const instant = await canaryWith('instant', 'latency-instant');
    await driveUntil(harness, instant, isFullyPromoted, { providers });
    expect(await lastRunPhase(instant)).toBe('Successful');

    const ranged = await canaryWith('ranged', 'latency-range');
    await driveUntil(harness, ranged, aborted, { providers });
    expect(await lastRunPhase(ranged)).toBe('Failed');
    expect(harness.violations).toEqual([]);
  });

  it('sigv4: the signed canary is promoted; without sigv4 the endpoint answers 403 and the rollout aborts', async () => {
    amp.value = 0.99;
    const metric = (signed: boolean) => ({
      name: 'rate',
      successCondition: 'result[0] >= 0.95',
      consecutiveErrorLimit: 0,
      provider: {
        prometheus: {
          address: `${amp.url}/workspaces/ws-e2e`,
          query: 'sum(rate(http_requests_total[5m]))',
          ...(signed && { authentication: { sigv4: { region: REGION } } }),
        },
      },
    });
    await createAnalysisTemplate(harness, 'amp-signed', { metrics: [metric(true)] });
    await createAnalysisTemplate(harness, 'amp-unsigned', { metrics: [metric(false)] });
    const signed = await canaryWith('signed', 'amp-signed');
    await driveUntil(harness, signed, isFullyPromoted, { providers });
    expect(await lastRunPhase(signed)).toBe('Successful');

    const unsigned = await canaryWith('unsigned', 'amp-unsigned');
    await driveUntil(harness, unsigned, aborted, { providers });
    expect(await lastRunPhase(unsigned)).toBe('Error');
  });

  it('oauth2 (web and prometheus): promoted with the token; without it the endpoint answers 401 and the rollout aborts', async () => {
    api.value = 1;
    const oauth2 = { tokenUrl: tokens.tokenUrl, ...CLIENT, scopes: ['metrics'] };
    const metrics = (withAuth: boolean) => [
      {
        name: 'status',
        successCondition: 'result == 1',
        consecutiveErrorLimit: 0,
        provider: {
          web: {
            url: `${api.url}/status`,
            jsonPath: '{$.data.value}',
            ...(withAuth && { authentication: { oauth2 } }),
          },
        },
      },
      {
        name: 'rate',
        successCondition: 'result[0] == 1',
        consecutiveErrorLimit: 0,
        provider: {
          prometheus: { address: api.url, query: 'up', ...(withAuth && { authentication: { oauth2 } }) },
        },
      },
    ];
    await createAnalysisTemplate(harness, 'oauth-with', { metrics: metrics(true) });
    await createAnalysisTemplate(harness, 'oauth-without', { metrics: metrics(false) });
    const withToken = await canaryWith('oauthwith', 'oauth-with');
    await driveUntil(harness, withToken, isFullyPromoted, { providers });
    expect(await lastRunPhase(withToken)).toBe('Successful');

    const without = await canaryWith('oauthwithout', 'oauth-without');
    await driveUntil(harness, without, aborted, { providers });
    expect(await lastRunPhase(without)).toBe('Error');
    const runs = await analysisRunsOf(harness, withToken);
    // Written in the template, the secret is in the run's spec as in Argo's; never in what the run reports.
    expect(JSON.stringify(runs.map((r) => r.status))).not.toContain(CLIENT.clientSecret);
  });
});
