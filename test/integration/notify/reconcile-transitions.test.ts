// The triggers a real reconcile fires, pass by pass, through a canary in the sandbox (fake clock): each transition once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutTransition } from '../../../src/reconciler/reconcile-rollout.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import { detectTransitions, type NotificationIntent } from '../../../src/notify/detect-transitions.ts';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';

type Status = Parameters<typeof detectTransitions>[1];

describe('transitions of a reconciled canary', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
  });
  afterAll(async () => {
    await harness.stop();
  });

  it('fires each built-in trigger once per transition, from the status each pass wrote', async () => {
    const fired: NotificationIntent[] = [];
    const onTransition = (t: RolloutTransition): void => {
      fired.push(...detectTransitions(t.before as Status | undefined, t.after as Status, t.scaled));
    };
    const key = await harness.createRollout(
      testRollout({
        name: 'web',
        replicas: 4,
        steps: [{ setWeight: 25 }, { pause: { duration: '10s' } }, { setWeight: 50 }, { pause: {} }],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { extra: { onTransition } });
    const first = String((await harness.rollout(key)).status?.currentPodHash);
    fired.length = 0;

    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    await harness.runUntil(
      key,
      (o) => o.rollout.status?.phase === 'Paused' && o.rollout.status.currentStepIndex === 3,
      {
        extra: { onTransition },
      },
    );
    const second = String((await harness.rollout(key)).status?.currentPodHash);
    expect(second).not.toBe(first);
    // A manual pause: promote it, as `rollgate promote` does, and run to the end.
    await promoteRollout(harness.clients, key);
    await harness.runUntil(key, isFullyPromoted, { extra: { onTransition } });

    const lifecycle = fired.filter((i) => i.trigger !== 'on-scaling-replica-set');
    expect(lifecycle).toEqual([
      { trigger: 'on-rollout-updated', revision: second, step: '-' },
      { trigger: 'on-rollout-step-completed', revision: second, step: '0' },
      { trigger: 'on-rollout-paused', revision: second, step: '1' },
      { trigger: 'on-rollout-step-completed', revision: second, step: '1' },
      { trigger: 'on-rollout-step-completed', revision: second, step: '2' },
      { trigger: 'on-rollout-paused', revision: second, step: '3' },
      { trigger: 'on-rollout-step-completed', revision: second, step: '3' },
      { trigger: 'on-rollout-completed', revision: second, step: '-' },
    ]);
    const scaling = fired.filter((i) => i.trigger === 'on-scaling-replica-set').map((i) => i.step);
    // Each replica count a ReplicaSet was scaled to, once: the canary up to 4, the old stable down to 0.
    // (A scale that only wrote an annotation is no scaling.)
    expect(new Set(scaling).size).toBe(scaling.length);
    expect(scaling).toContain(`web-${second}=4`);
    expect(scaling).toContain(`web-${first}=0`);
    expect(scaling.every((s) => s.startsWith(`web-${first}=`) || s.startsWith(`web-${second}=`))).toBe(true);
    expect(key.namespace).toBe(NAMESPACE);
  }, 120_000);
});
