// The judge metric end to end: sandbox rollouts whose canary and stable pods (selected by canaryMetadata/stableMetadata roles) Prometheus scrapes; a slower canary aborts, an equal one promotes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { startPrometheus, type TestPrometheus } from '../../support/prometheus.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import {
  NAMESPACE,
  ReconcileHarness,
  analysisRunsOf,
  createAnalysisTemplate,
  driveUntil,
} from './analysis-harness.ts';

const METRIC = 'rollgate_test_request_latency_ms';
/** Latency series each pod exposes (one per route), so each side has enough points for the judge. */
const ROUTES = 15;

let prometheus: TestPrometheus;
let harness: ReconcileHarness;

beforeAll(async () => {
  prometheus = await startPrometheus();
  harness = await ReconcileHarness.start({ seed: 34 });
  const side = (role: string) => ({
    prometheus: {
      address: prometheus.address,
      query: `${METRIC}{app="{{args.app}}",role="${role}"}`,
    },
  });
  await createAnalysisTemplate(harness, 'latency-vs-stable', {
    args: [{ name: 'app' }],
    metrics: [
      {
        name: 'latency',
        provider: {
          judge: { canary: side('canary'), stable: side('stable'), direction: 'increase', tolerance: 0.05 },
        },
      },
    ],
  });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await prometheus?.stop();
});

/**
 * Stands in for Prometheus scraping the pods: every pod of `app` in the sandbox exposes its latency per
 * route, labelled with the role its ReplicaSet gave it (canaryMetadata / stableMetadata); canary pods
 * answer `canaryFactor` times slower. Returns once Prometheus has both sides.
 */
async function exposeLatency(app: string, canaryFactor: number): Promise<void> {
  const pods = await harness.clients.core.listNamespacedPod({
    namespace: NAMESPACE,
    labelSelector: `app=${app}`,
  });
  const counts = { canary: 0, stable: 0 };
  for (const pod of pods.items) {
    const role = pod.metadata?.labels?.['role'];
    if (role !== 'canary' && role !== 'stable') continue;
    counts[role]++;
    for (let route = 0; route < ROUTES; route++) {
      const base = 80 + (40 * route) / (ROUTES - 1);
      const value = role === 'canary' ? base * canaryFactor : base;
      prometheus.exporter.set(METRIC, value, {
        app,
        role,
        pod: pod.metadata?.name ?? '',
        route: `r${route}`,
      });
    }
  }
  expect(counts.canary).toBeGreaterThan(0);
  expect(counts.stable).toBeGreaterThan(0);
  for (const role of ['canary', 'stable'] as const)
    await prometheus.waitFor(
      `count(${METRIC}{app="${app}",role="${role}"})`,
      (v) => v[0] === counts[role] * ROUTES,
    );
}

/** A rollout at app:1.0, then app:2.0 paused at 50 % before the judge step (so the pods exist to be scraped). */
async function canaryBeforeJudge(app: string): Promise<RolloutKey> {
  const object = testRollout({ name: app, replicas: 4, steps: [] });
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  spec.strategy.canary = {
    ...spec.strategy.canary,
    canaryMetadata: { labels: { role: 'canary' } },
    stableMetadata: { labels: { role: 'stable' } },
    steps: [
      { setWeight: 50 },
      { pause: {} },
      {
        analysis: { templates: [{ templateName: 'latency-vs-stable' }], args: [{ name: 'app', value: app }] },
      },
    ],
  };
  const key = await harness.createRollout(object);
  await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 60_000 });
  await harness.patchSpec(key, {
    template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'app', image: 'app:2.0' }] } },
  });
  await driveUntil(harness, key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 60_000 });
  return key;
}

const canaryWeight = (o: ObservedState): number | undefined =>
  o.rollout.status?.canary?.weights?.canary.weight;

describe('the judge metric in a rollout (sandbox + real Prometheus)', () => {
  it('promotes a canary whose latency matches the stable', async () => {
    const key = await canaryBeforeJudge('judged-equal');
    await exposeLatency('judged-equal', 1);
    await promoteRollout(harness.clients, key);
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 120_000 });
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Successful');
    const measurement = run?.status?.metricResults?.[0]?.measurements?.at(-1);
    expect(JSON.parse(measurement?.value ?? '{}')).toMatchObject({
      verdict: 'pass',
      canary: { median: 100 },
      stable: { median: 100 },
      pValue: 1,
    });
    expect(harness.violations).toEqual([]);
  });

  it('aborts a canary 30 % slower than the stable: Degraded, weight 0, the reason in the run', async () => {
    const key = await canaryBeforeJudge('judged-slow');
    const stable = (await harness.observe(key)).rollout.status?.stableRS;
    await exposeLatency('judged-slow', 1.3);
    await promoteRollout(harness.clients, key);
    await driveUntil(harness, key, (o) => o.rollout.status?.phase === 'Degraded' && canaryWeight(o) === 0, {
      timeoutMs: 120_000,
    });
    const observed = await harness.observe(key);
    expect(observed.rollout.status?.stableRS).toBe(stable);
    const [run] = await analysisRunsOf(harness, key);
    expect(run?.status?.phase).toBe('Failed');
    const measurement = run?.status?.metricResults?.[0]?.measurements?.at(-1);
    expect(measurement?.phase).toBe('Failed');
    expect(measurement?.message).toMatch(
      /^canary median 130 is 30\.0 % above stable 100 \(Mann-Whitney p = /,
    );
    expect(harness.violations).toEqual([]);
  });
});
