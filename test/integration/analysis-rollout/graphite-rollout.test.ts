// Canary analysis end to end on a REAL Graphite (Debian's carbon-cache + graphite-web): promoted on good points, aborted on bad ones.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createClusterMetricProviders } from '../../../src/reconciler/analysis-run-reconciler.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { startGraphite, type TestGraphite } from '../../support/graphite.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import { ReconcileHarness, analysisRunsOf, createAnalysisTemplate, driveUntil } from './analysis-harness.ts';

let harness: ReconcileHarness;
let graphite: TestGraphite;
let providers: MetricProviderRegistry;

beforeAll(async () => {
  [harness, graphite] = await Promise.all([ReconcileHarness.start({ seed: 34 }), startGraphite()]);
  providers = createClusterMetricProviders(harness.clients, {
    allowedHosts: [],
    deniedHosts: [],
    jobServiceAccounts: [],
  });
  // Argo's documented shape: a percentage over the last minutes, every value at least 90.
  await createAnalysisTemplate(harness, 'graphite-success-rate', {
    args: [{ name: 'service-name' }],
    metrics: [
      {
        name: 'success-rate',
        interval: '5s',
        count: 2,
        successCondition: 'len(result) > 0 && all(result, # >= 90)',
        failureLimit: 0,
        provider: {
          graphite: {
            address: graphite.address,
            query: `target=asPercent(
                stats.{{args.service-name}}.ok,
                stats.{{args.service-name}}.requests
              )&from=-5min`,
          },
        },
      },
    ],
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([harness?.stop(), graphite?.stop()]);
});
afterEach(() => {
  expect(harness.violations).toEqual([]);
});

const aborted = (o: ObservedState): boolean =>
  o.rollout.status?.phase === 'Degraded' && o.rollout.status?.canary?.weights?.canary.weight === 0;

/** Writes the service's request and ok counts for the last seconds and waits until Graphite renders them. */
async function writeTraffic(service: string, requests: number, ok: number): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await graphite.write([
    { path: `stats.${service}.requests`, value: requests, at: now - 1 },
    { path: `stats.${service}.ok`, value: ok, at: now - 1 },
  ]);
  await graphite.waitFor(`stats.${service}.ok`, (v) => v.includes(ok));
}

async function canaryWithAnalysis(name: string): Promise<RolloutKey> {
  const object = testRollout({ name, replicas: 4, steps: [] });
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  spec.strategy.canary = {
    ...spec.strategy.canary,
    steps: [
      { setWeight: 25 },
      {
        analysis: {
          templates: [{ templateName: 'graphite-success-rate' }],
          args: [{ name: 'service-name', value: name }],
        },
      },
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

describe('Graphite', () => {
  it('promotes a canary whose success percentage is high', async () => {
    await writeTraffic('gr-good', 200, 198);
    const key = await canaryWithAnalysis('gr-good');
    const before = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).not.toBe(before);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.measurements?.[0]?.value).toBe('[99.000000]');
  });

  it('aborts a canary whose success percentage is low: Degraded, weight 0, stable kept', async () => {
    await writeTraffic('gr-bad', 200, 120);
    const key = await canaryWithAnalysis('gr-bad');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await driveUntil(harness, key, aborted, { timeoutMs: 120_000, providers });
    expect((await harness.observe(key)).rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
    expect(run?.status?.metricResults?.[0]?.measurements?.at(-1)?.value).toBe('[60.000000]');
  });
});
