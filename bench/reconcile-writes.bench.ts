// API writes per completed canary and per no-op reconcile (goal: a reconcile with nothing to do writes nothing).
import {
  ReconcileHarness,
  isFullyPromoted,
  testRollout,
} from '../test/integration/reconcile/reconcile-harness.ts';
import type { BenchResult } from './run.ts';

export async function run(): Promise<BenchResult[]> {
  const harness = await ReconcileHarness.start();
  try {
    const key = await harness.createRollout(
      testRollout({ name: 'bench', replicas: 5, scaleDownDelaySeconds: 5 }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });

    const writesBefore = harness.writes;
    const reconcilesBefore = harness.reconciles;
    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'bench' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    const started = performance.now();
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 120_000 });
    const canaryMs = performance.now() - started;
    const canaryWrites = harness.writes - writesBefore;
    const canaryReconciles = harness.reconciles - reconcilesBefore;

    const noopRounds = 50;
    let noopWrites = 0;
    const noopStarted = performance.now();
    for (let i = 0; i < noopRounds; i += 1)
      noopWrites += (await harness.reconcile(key, {}, false)).stats?.writes ?? 0;
    const noopMs = (performance.now() - noopStarted) / noopRounds;

    return [
      {
        name: 'API writes per completed canary',
        value: canaryWrites,
        unit: 'writes',
        notes: `5 replicas, steps setWeight 20 / pause 10s / setWeight 60 / pause 10s; ${canaryReconciles} reconcile calls, ${Math.round(canaryMs)} ms wall (sandbox, fake clock); ReplicaSet, Service, status and Event writes`,
      },
      {
        name: 'API writes per no-op reconcile',
        value: noopWrites / noopRounds,
        unit: 'writes',
        goal: '0',
        notes: `${noopRounds} reconciles of a Healthy rollout`,
      },
      {
        name: 'no-op reconcile time',
        value: noopMs,
        unit: 'ms',
        notes: 'one read (4 requests) + plan, against the in-process sandbox',
      },
    ];
  } finally {
    await harness.stop();
  }
}
