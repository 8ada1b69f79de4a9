// F1: a canary whose pods never start must not wedge the rollout; deadline and manual abort always win, even over a failing router.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortRollout } from '../../../src/views/rollout-commands.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import type { TrafficRouter } from '../../../src/reconciler/traffic-router.ts';
import { DRIVEN_APIS, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

const RESYNC_MS = 5_000;

function canaryOf(observed: ObservedState) {
  const status = observed.rollout.status ?? {};
  return observed.replicaSets.find(
    (rs) => rs.podTemplateHash !== status.stableRS && rs.podTemplateHash !== '',
  );
}

/** A router that refuses every call, like a mesh that will not route to unhealthy pods. */
class BrokenRouter implements TrafficRouter {
  readonly type = 'broken';
  calls = 0;
  async setWeights(): Promise<void> {
    this.calls += 1;
    throw new Error('virtualservice web: admission webhook denied the request: no healthy upstream');
  }
}

const badTemplate = {
  template: {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'app:9.9' }] },
  },
};

async function deployHealthy(harness: ReconcileHarness, name: string, extra: Record<string, unknown> = {}) {
  const object = testRollout({
    name,
    replicas: 3,
    progressDeadlineSeconds: 10,
    progressDeadlineAbort: true,
    abortScaleDownDelaySeconds: 5,
    ...extra,
  });
  const key = await harness.createRollout(object);
  await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
  return key;
}

function imageOf(name: string) {
  return { template: { ...badTemplate.template, metadata: { labels: { app: name } } } };
}

// In both groups: the failure happened under Argo Rollouts, so it is held for argoproj.io Rollouts too.
describe.each(DRIVEN_APIS)('F1: a canary that never starts ($group)', ({ api }) => {
  for (const routerKind of ['none', 'broken'] as const) {
    describe(routerKind === 'none' ? 'without a router (replica ratio)' : 'with a broken router', () => {
      let harness: ReconcileHarness;
      let broken: BrokenRouter | undefined;
      beforeAll(async () => {
        broken = routerKind === 'broken' ? new BrokenRouter() : undefined;
        harness = await ReconcileHarness.start({
          missingImages: ['app:9.9'],
          api,
          ...(broken ? { router: broken } : {}),
        });
      });
      afterAll(async () => harness.stop());

      it('aborts on the progress deadline: Degraded, weight 0, canary scaled to 0, message names ImagePullBackOff', async () => {
        const name = 'f1';
        const key = await deployHealthy(harness, name, { canaryService: undefined });
        const stable = (await harness.observe(key)).rollout.status?.stableRS;
        await harness.patchSpec(key, imageOf(name));
        const start = harness.clock.now().getTime();

        const degradedAfter = await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Degraded', {
          timeoutMs: 10_000 + RESYNC_MS,
        });
        expect(degradedAfter).toBeLessThanOrEqual(10_000 + RESYNC_MS);
        let observed = await harness.observe(key);
        const status = observed.rollout.status ?? {};
        expect(status.abort).toBe(true);
        expect(status.message).toMatch(/RolloutAborted/);
        expect(status.message).toMatch(/ImagePullBackOff|ErrImagePull/);
        expect(status.stableRS).toBe(stable);

        await harness.runUntil(
          key,
          (o) => o.rollout.status?.canary?.weights?.canary.weight === 0 && (canaryOf(o)?.replicas ?? 0) === 0,
          { timeoutMs: 5_000 + 2 * RESYNC_MS },
        );
        observed = await harness.observe(key);
        expect(canaryOf(observed)?.status.replicas ?? 0).toBe(0);
        expect(harness.clock.now().getTime() - start).toBeLessThanOrEqual(10_000 + 5_000 + 2 * RESYNC_MS);
        const stableRs = observed.replicaSets.find((rs) => rs.podTemplateHash === stable);
        expect(stableRs?.status.availableReplicas).toBe(3);
        expect(harness.violations).toEqual([]);
        if (broken) expect(broken.calls).toBeGreaterThan(0);
      });

      it('takes a manual abort while progressing (and, when traffic can move, while paused) within one resync', async () => {
        // A router that refuses everything keeps the canary at its first step: "paused" is never reached.
        const phases =
          routerKind === 'broken' ? (['progressing'] as const) : (['progressing', 'paused'] as const);
        for (const phase of phases) {
          const name = `f1-manual-${phase}`;
          const key = await deployHealthy(harness, name, {
            progressDeadlineSeconds: 600,
            steps: [{ setWeight: 34 }, { pause: {} }, { setWeight: 67 }],
          });
          if (phase === 'progressing') {
            await harness.patchSpec(key, imageOf(name));
            await harness.reconcile(key);
            await harness.sandbox.advance(2_000);
            await harness.reconcile(key);
            expect((await harness.observe(key)).rollout.status?.phase).toBe('Progressing');
          } else {
            await harness.patchSpec(key, {
              template: {
                metadata: { labels: { app: name } },
                spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
              },
            });
            await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
          }
          await abortRollout(harness.clients, key);
          const took = await harness.runUntil(
            key,
            (o) =>
              o.rollout.status?.phase === 'Degraded' && o.rollout.status.canary?.weights?.canary.weight === 0,
            { timeoutMs: RESYNC_MS },
          );
          expect(took).toBeLessThanOrEqual(RESYNC_MS);
          expect((await harness.observe(key)).rollout.status?.message).toMatch(/RolloutAborted/);
        }
        expect(harness.violations).toEqual([]);
      });
    });
  }
});
