// Canary analysis end to end: sandbox cluster + a real Prometheus; promoted by good metrics, aborted by bad ones, F4 (in both driven groups), failing job metric.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAnalysisRunViews } from '../../../src/views/analysis-run-view.ts';
import { readAnalysisRunViews } from '../../../src/views/read-analysis-runs.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { ROLLGATE_API } from '../../../src/manifest/driven-api.ts';
import { startPrometheus, type TestPrometheus } from '../../support/prometheus.ts';
import { DRIVEN_APIS, isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import {
  NAMESPACE,
  ReconcileHarness,
  analysisRunsOf,
  createAnalysisTemplate,
  driveUntil,
} from './analysis-harness.ts';
import { sandboxJobSpec } from '../../support/sandbox-job.ts';

const METRIC = 'rollgate_test_success_rate';

function newTemplate(name: string, image: string) {
  return {
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image }] },
    },
  };
}

function canaryWeight(observed: ObservedState): number | undefined {
  return observed.rollout.status?.canary?.weights?.canary.weight;
}

let prometheus: TestPrometheus;
beforeAll(async () => {
  prometheus = await startPrometheus();
}, 60_000);
afterAll(async () => {
  await prometheus?.stop();
});

/** Sets the success rate Prometheus reports for `rollout` and waits until a query sees it. */
async function setSuccessRate(rollout: string, value: number): Promise<void> {
  prometheus.exporter.set(METRIC, value, { rollout });
  await prometheus.waitFor(`${METRIC}{rollout="${rollout}"}`, (v) => v[0] === value);
}

/** A rollout fully promoted at app:1.0, with `canary` merged into its strategy. */
async function stableRollout(
  harness: ReconcileHarness,
  name: string,
  canary: Record<string, unknown>,
  replicas = 4,
): Promise<RolloutKey> {
  const object = testRollout({ name, replicas, steps: [] });
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  spec.strategy.canary = { ...spec.strategy.canary, ...canary };
  const key = await harness.createRollout(object);
  await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 60_000 });
  return key;
}

/** A background metric on the rollout's success rate: 0.5 ≤ rate < 0.95 is Inconclusive. */
function backgroundRate() {
  return {
    args: [{ name: 'rollout' }],
    metrics: [
      {
        name: 'success-rate',
        interval: '5s',
        successCondition: 'result[0] >= 0.95',
        failureCondition: 'result[0] < 0.5',
        provider: {
          prometheus: { address: prometheus.address, query: `${METRIC}{rollout="{{args.rollout}}"}` },
        },
      },
    ],
  };
}

describe('analysis in the running reconciler (sandbox + real Prometheus)', () => {
  let harness: ReconcileHarness;

  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 6 });
    // successCondition and failureCondition both set: 0.5 ≤ rate < 0.95 is Inconclusive.
    await createAnalysisTemplate(harness, 'success-rate', {
      args: [{ name: 'rollout' }, { name: 'count', value: '2' }],
      metrics: [
        {
          name: 'success-rate',
          interval: '5s',
          count: '{{args.count}}',
          successCondition: 'result[0] >= 0.95',
          failureCondition: 'result[0] < 0.5',
          provider: {
            prometheus: {
              address: prometheus.address,
              query: `${METRIC}{rollout="{{args.rollout}}"}`,
            },
          },
        },
      ],
    });
    await createAnalysisTemplate(harness, 'failing-job', {
      metrics: [
        {
          name: 'smoke-test',
          provider: { job: { spec: sandboxJobSpec('fail') } },
        },
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await harness?.stop();
  });

  it('promotes a canary whose inline analysis step measures good metrics', async () => {
    await setSuccessRate('good', 0.99);
    const key = await stableRollout(harness, 'good', {
      steps: [
        { setWeight: 25 },
        {
          analysis: {
            templates: [{ templateName: 'success-rate' }],
            args: [{ name: 'rollout', value: 'good' }],
          },
        },
        { setWeight: 50 },
      ],
    });
    const firstStable = (await harness.observe(key)).rollout.status?.stableRS;
    await harness.patchSpec(key, newTemplate('good', 'app:2.0'));
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000 });

    const observed = await harness.observe(key);
    expect(observed.rollout.status?.phase).toBe('Healthy');
    expect(observed.rollout.status?.stableRS).not.toBe(firstStable);
    const runs = await analysisRunsOf(harness, key);
    expect(runs).toHaveLength(1);
    const result = runs[0]?.status?.metricResults?.[0];
    expect(runs[0]?.status?.phase).toBe('Successful');
    expect(result?.count).toBe(2);
    expect(result?.measurements?.map((m) => m.value)).toEqual(['[0.99]', '[0.99]']);
    expect(harness.violations).toEqual([]);
  });

  it('aborts a canary whose inline analysis step measures bad metrics: Degraded, weight 0', async () => {
    await setSuccessRate('bad', 0.1);
    const key = await stableRollout(harness, 'bad', {
      steps: [
        { setWeight: 25 },
        {
          analysis: {
            templates: [{ templateName: 'success-rate' }],
            args: [{ name: 'rollout', value: 'bad' }],
          },
        },
        { setWeight: 50 },
      ],
    });
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await harness.patchSpec(key, newTemplate('bad', 'app:2.0'));
    await driveUntil(harness, key, (o) => o.rollout.status?.phase === 'Degraded' && canaryWeight(o) === 0, {
      timeoutMs: 120_000,
    });
    const observed = await harness.observe(key);
    expect(observed.rollout.status?.abort).toBe(true);
    expect(observed.rollout.status?.stableRS).toBe(stable);
    const runs = await analysisRunsOf(harness, key);
    expect(runs.map((r) => r.status?.phase)).toEqual(['Failed']);
    expect(runs[0]?.status?.metricResults?.[0]?.measurements?.at(-1)?.value).toBe('[0.1]');
    expect(harness.violations).toEqual([]);
  });

  it('aborts a canary when its job metric runs a Job that fails', async () => {
    const key = await stableRollout(harness, 'jobfail', {
      steps: [
        { setWeight: 25 },
        { analysis: { templates: [{ templateName: 'failing-job' }] } },
        { setWeight: 50 },
      ],
    });
    await harness.patchSpec(key, newTemplate('jobfail', 'app:2.0'));
    await driveUntil(harness, key, (o) => o.rollout.status?.phase === 'Degraded' && canaryWeight(o) === 0, {
      timeoutMs: 120_000,
      stepMs: 1_000,
    });
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
    const measurement = run?.status?.metricResults?.[0]?.measurements?.at(-1);
    expect(measurement?.message).toMatch(/failed/);
    // The finished Job is cleaned up.
    const jobs = await harness.clients.batch.listNamespacedJob({ namespace: key.namespace });
    const left = jobs.items.filter(
      (j) => j.metadata?.labels?.['rollgate.dev/analysis-run'] === run?.metadata.name,
    );
    expect(left.filter((j) => j.metadata?.deletionTimestamp === undefined)).toEqual([]);
    expect(harness.violations).toEqual([]);
  });
});

// F4 (FIELD-FAILURES.md) for both groups: the rollgate.dev Rollouts Rollgate's sync writes, and the
// argoproj.io ones Argo CD or Flux apply in controller mode.
describe.each(DRIVEN_APIS)('F4 in the running reconciler ($group)', ({ group, api }) => {
  let harness: ReconcileHarness;
  const name = `f4-${group.split('.')[0]}`;

  /** AnalysisRuns in rollgate.dev: where an argoproj.io Rollout's must never be. */
  async function rollgateRuns(): Promise<unknown[]> {
    const list = (await harness.clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API.group,
      version: ROLLGATE_API.version,
      namespace: NAMESPACE,
      plural: ROLLGATE_API.plurals.analysisRuns,
    })) as { items: unknown[] };
    return list.items;
  }

  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 6, api });
    await createAnalysisTemplate(harness, 'background-rate', backgroundRate());
  }, 60_000);
  afterAll(async () => {
    await harness?.stop();
  });

  it('F4: an always-inconclusive background analysis pauses the rollout with one run until promote', async () => {
    await setSuccessRate(name, 0.7);
    const key = await stableRollout(
      harness,
      name,
      {
        steps: [{ setWeight: 10 }, { pause: { duration: '30s' } }],
        analysis: {
          templates: [{ templateName: 'background-rate' }],
          args: [{ name: 'rollout', value: name }],
        },
      },
      10,
    );
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await harness.patchSpec(key, newTemplate(name, 'app:2.0'));
    const inconclusive = (o: ObservedState): boolean =>
      (o.rollout.status?.pauseConditions ?? []).some((c) => c.reason === 'InconclusiveAnalysisRun');
    await driveUntil(harness, key, inconclusive, { timeoutMs: 60_000 });

    const paused = await harness.observe(key);
    expect(paused.rollout.status?.controllerPause).toBe(true);
    const stableReplicas = paused.replicaSets.find((rs) => rs.podTemplateHash === stable)?.replicas;
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Inconclusive');
    // The run is in the Rollout's own group, owned by it there; none in the other group.
    expect(run?.apiVersion).toBe(api.apiVersion);
    const owner = (run?.metadata as { ownerReferences?: Array<{ apiVersion?: string }> })
      .ownerReferences?.[0];
    expect(owner?.apiVersion).toBe(api.apiVersion);
    if (api.group !== ROLLGATE_API.group) expect(await rollgateRuns()).toEqual([]);

    // 60 s of fake time past a 30 s pause step: nothing moves, the run is kept, never recreated.
    const until = harness.clock.now().getTime() + 60_000;
    await driveUntil(harness, key, () => harness.clock.now().getTime() >= until, { timeoutMs: 70_000 });
    const after = await harness.observe(key);
    expect(inconclusive(after)).toBe(true);
    expect(after.rollout.status?.controllerPause).toBe(true);
    expect(after.rollout.status?.currentStepIndex).toBe(paused.rollout.status?.currentStepIndex);
    expect(after.rollout.status?.stableRS).toBe(stable);
    expect(after.replicaSets.find((rs) => rs.podTemplateHash === stable)?.replicas).toBe(stableReplicas);
    const runs = await analysisRunsOf(harness, key);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.metadata.uid).toBe(run?.metadata.uid);
    // `rollgate status` shows the run, its metric and the inconclusive measurement.
    const uid = String((paused.rollout.metadata as { uid?: string }).uid);
    const text = formatAnalysisRunViews(
      await readAnalysisRunViews(harness.clients, key, uid, undefined, api),
    ).join('\n');
    expect(text).toMatch(/\(background\)\s+Inconclusive/);
    expect(text).toMatch(/success-rate\s+Inconclusive/);
    expect(text).toContain('Inconclusive [0.7]');

    // Promote: the pause is cleared and a fresh run (new uid) measures the now-good metric.
    await setSuccessRate(name, 0.99);
    await promoteRollout(harness.clients, key);
    await driveUntil(
      harness,
      key,
      (o) => !inconclusive(o) && o.analysisRuns.some((r) => r.phase === 'Running'),
      { timeoutMs: 30_000 },
    );
    const fresh = await analysisRunsOf(harness, key);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]?.metadata.uid).not.toBe(run?.metadata.uid);
    expect(fresh[0]?.status?.metricResults?.[0]?.measurements?.at(-1)?.phase).toBe('Successful');
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000 });
    if (api.group !== ROLLGATE_API.group) expect(await rollgateRuns()).toEqual([]);
    expect(harness.violations).toEqual([]);
  });
});
