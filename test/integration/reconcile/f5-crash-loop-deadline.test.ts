// F5: a crash-looping canary (Ready flaps) is aborted by the progress deadline, and a reconciler restart does not extend it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { DRIVEN_APIS, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

const RESYNC_MS = 5_000;

function crashingTemplate(name: string) {
  return {
    template: {
      metadata: { labels: { app: name }, annotations: { 'sandbox.rollgate.dev/behavior': 'crash-loop' } },
      spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
    },
  };
}

// In both groups: the failure happened under Argo Rollouts, so it is held for argoproj.io Rollouts too.
describe.each(DRIVEN_APIS)('F5: crash-looping canary and the progress deadline ($group)', ({ api }) => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 5, api });
  });
  afterAll(async () => harness.stop());

  async function startCrashingCanary(name: string): Promise<{ key: RolloutKey; start: number }> {
    const key = await harness.createRollout(
      // minReadySeconds 5: a crash-looping container is Ready for ~2 s per run, so it flaps Ready but
      // never becomes available, exactly the pods F5 is about.
      testRollout({
        name,
        replicas: 2,
        progressDeadlineSeconds: 10,
        progressDeadlineAbort: true,
        minReadySeconds: 5,
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, crashingTemplate(name));
    return { key, start: harness.clock.now().getTime() };
  }

  it('aborts within the deadline + one resync although canary pods are briefly Ready between crashes', async () => {
    const { key, start } = await startCrashingCanary('f5');
    let sawCanaryReady = false;
    let sawRestart = false;
    await harness.runUntil(
      key,
      (observed) => {
        const status = observed.rollout.status ?? {};
        for (const pod of observed.pods.filter(
          (p) => p.podTemplateHash === status.currentPodHash && p.podTemplateHash !== status.stableRS,
        )) {
          if (pod.ready) sawCanaryReady = true;
          if (pod.containers.some((c) => c.restartCount > 0)) sawRestart = true;
        }
        return status.abort === true && status.phase === 'Degraded';
      },
      { timeoutMs: 10_000 + RESYNC_MS, stepMs: 500 },
    );
    expect(harness.clock.now().getTime() - start).toBeLessThanOrEqual(10_000 + RESYNC_MS);
    expect(sawRestart).toBe(true);
    expect(sawCanaryReady).toBe(true);
    const status = (await harness.observe(key)).rollout.status ?? {};
    expect(status.message).toMatch(/RolloutAborted/);
    expect(status.message).toMatch(/CrashLoopBackOff|Error/);
    expect(harness.violations).toEqual([]);
  });

  it('keeps the deadline across a reconciler restart mid-way', async () => {
    const { key, start } = await startCrashingCanary('f5-restart');
    // First reconciler: runs for 6 s of fake time, then "dies".
    while (harness.clock.now().getTime() - start < 6_000) {
      await harness.reconcile(key);
      await harness.sandbox.advance(500);
    }
    expect((await harness.observe(key)).rollout.status?.abort).not.toBe(true);
    // A fresh reconciler (a reconcile keeps nothing between calls) must still abort by the original deadline.
    await harness.runUntil(key, (o) => o.rollout.status?.abort === true, {
      timeoutMs: 10_000 + RESYNC_MS - (harness.clock.now().getTime() - start),
      stepMs: 500,
    });
    expect(harness.clock.now().getTime() - start).toBeLessThanOrEqual(10_000 + RESYNC_MS);
  });
});
