// Step analysis end to end: the run is built from the template in the cluster, measured in the same reconcile job, and decides the rollout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMetricProviderRegistry,
  type MetricProvider,
} from '../../../src/analysis/providers/metric-provider.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { abortRollout } from '../../../src/views/rollout-commands.ts';
import { reconcileRolloutWithAnalysis } from '../../../src/reconciler/reconcile-with-analysis.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import { ReconcileHarness, isFullyPromoted, testRollout, NAMESPACE } from './reconcile-harness.ts';

/** A "web" provider that answers from a table instead of the network: the value per URL. */
function fakeWebProvider(values: Map<string, number>): MetricProvider {
  return {
    type: 'web',
    measure: async (metric) => {
      const url = (metric.provider as { web?: { url?: string } }).web?.url ?? '';
      return { value: values.get(url) ?? 0 };
    },
  };
}

describe('analysis steps through the reconciler', () => {
  let harness: ReconcileHarness;
  const values = new Map<string, number>();
  const providers = createMetricProviderRegistry([fakeWebProvider(values)]);
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 9 });
    harness.reconcileImpl = (key, deps) => reconcileRolloutWithAnalysis(key, { ...deps, providers });
    await harness.clients.custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysistemplates',
      body: {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'AnalysisTemplate',
        metadata: { name: 'success-rate', namespace: NAMESPACE },
        spec: {
          args: [{ name: 'service' }],
          metrics: [
            {
              name: 'success-rate',
              count: 2,
              interval: '2s',
              successCondition: 'result >= 0.95',
              failureCondition: 'result < 0.95',
              provider: { web: { url: 'http://metrics/{{args.service}}' } },
            },
          ],
        },
      },
    });
  });
  afterAll(async () => harness.stop());

  /**
   * A 2-replica rollout `name` whose second step runs the success-rate analysis on its own service,
   * fully promoted at its first image and then updated to app:2.0: the canary that gets analysed.
   */
  async function updateAnalysedRollout(
    name: string,
    analysisFields: Record<string, unknown> = {},
  ): Promise<RolloutKey> {
    const key = await harness.createRollout(
      testRollout({
        name,
        replicas: 2,
        steps: [
          { setWeight: 50 },
          {
            analysis: {
              templates: [{ templateName: 'success-rate' }],
              args: [{ name: 'service', value: name }],
              ...analysisFields,
            },
          },
        ],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    return key;
  }

  for (const [name, value, expected] of [
    ['analysis-good', 0.99, 'promoted'],
    ['analysis-bad', 0.5, 'aborted'],
  ] as const) {
    it(`a canary whose metric reads ${value} is ${expected}`, async () => {
      values.set(`http://metrics/${name}`, value);
      const key = await updateAnalysedRollout(name);
      await harness.runUntil(
        key,
        (o) => (expected === 'promoted' ? isFullyPromoted(o) : o.rollout.status?.phase === 'Degraded'),
        { timeoutMs: 60_000 },
      );
      const observed = await harness.observe(key);
      expect(observed.analysisRuns).toHaveLength(1);
      const run = observed.analysisRuns[0];
      expect(run?.phase).toBe(expected === 'promoted' ? 'Successful' : 'Failed');
      if (expected === 'aborted')
        expect(observed.rollout.status?.message).toMatch(/RolloutAborted.*AnalysisRun/);
      expect(harness.violations).toEqual([]);
    });
  }

  it("a metric in the rollout's own dryRun is measured but does not decide: a bad reading still promotes", async () => {
    const name = 'analysis-dry-run';
    values.set(`http://metrics/${name}`, 0.5);
    const key = await updateAnalysedRollout(name, {
      dryRun: [{ metricName: 'success-rate' }],
      measurementRetention: [{ metricName: 'success-rate', limit: 1 }],
    });
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const runs = (await harness.clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
      labelSelector: `rollgate.dev/rollout=${name}`,
    })) as {
      items: Array<{
        spec: { dryRun?: unknown; measurementRetention?: unknown };
        status?: { phase?: string; metricResults?: Array<{ failed?: number; measurements?: unknown[] }> };
      }>;
    };
    expect(runs.items).toHaveLength(1);
    const run = runs.items[0];
    expect(run?.spec.dryRun).toEqual([{ metricName: 'success-rate' }]);
    expect(run?.spec.measurementRetention).toEqual([{ metricName: 'success-rate', limit: 1 }]);
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.failed).toBeGreaterThanOrEqual(1);
    expect(run?.status?.metricResults?.[0]?.measurements).toHaveLength(1);
    expect(harness.violations).toEqual([]);
  });

  it('a template holding only `templates:` (Argo 1.7 nested templates) runs the metrics of the templates it names', async () => {
    const name = 'analysis-nested';
    // Two levels: combined → (a ClusterAnalysisTemplate holding only templates) → success-rate.
    await harness.clients.custom.createClusterCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      plural: 'clusteranalysistemplates',
      body: {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'ClusterAnalysisTemplate',
        metadata: { name: 'nested-middle' },
        spec: { templates: [{ templateName: 'success-rate' }], dryRun: [{ metricName: 'never-measured' }] },
      },
    });
    await harness.clients.custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysistemplates',
      body: {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'AnalysisTemplate',
        metadata: { name: 'combined', namespace: NAMESPACE },
        spec: { templates: [{ templateName: 'nested-middle', clusterScope: true }] },
      },
    });
    values.set(`http://metrics/${name}`, 0.5);
    const key = await updateAnalysedRollout(name, { templates: [{ templateName: 'combined' }] });
    // The nested metric reads 0.5: the run fails and the canary is aborted (ignored, nothing would be measured).
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Degraded', { timeoutMs: 60_000 });
    const runs = (await harness.clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
      labelSelector: `rollgate.dev/rollout=${name}`,
    })) as {
      items: Array<{
        spec: { metrics: Array<{ name: string; provider: { web?: { url?: string } } }>; dryRun?: unknown };
        status?: { phase?: string };
      }>;
    };
    expect(runs.items).toHaveLength(1);
    const run = runs.items[0];
    expect(run?.spec.metrics.map((m) => [m.name, m.provider.web?.url])).toEqual([
      ['success-rate', `http://metrics/${name}`],
    ]);
    expect(run?.spec.dryRun).toEqual([{ metricName: 'never-measured' }]);
    expect(run?.status?.phase).toBe('Failed');
    expect(harness.violations).toEqual([]);
  });

  it('takes a manual abort while the step analysis is running within one resync (F1)', async () => {
    const name = 'analysis-abort';
    values.set(`http://metrics/${name}`, 0.99);
    const key = await updateAnalysedRollout(name);
    await harness.runUntil(key, (o) => o.analysisRuns.some((run) => run.phase === 'Running'), {
      timeoutMs: 30_000,
    });
    await abortRollout(harness.clients, key);
    const took = await harness.runUntil(
      key,
      (o) => o.rollout.status?.phase === 'Degraded' && o.rollout.status.canary?.weights?.canary.weight === 0,
      { timeoutMs: 5_000 },
    );
    expect(took).toBeLessThanOrEqual(5_000);
    expect(harness.violations).toEqual([]);
  });
});
