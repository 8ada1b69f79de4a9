// Argo Rollouts' behaviour where users notice a difference, played through planRollout with a fake clock.
import { describe, it, expect } from 'vitest';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import { InMemoryWorld } from '../../builders/in-memory-world.ts';
import { healthyWorld, runUntil } from '../../builders/run-until.ts';

const replicasOf = (world: InMemoryWorld, image: string) =>
  [...world.sets.values()].find((set) => set.rs.podTemplateHash === hashOf(image))?.rs.replicas ?? 0;

describe('a basic canary (no trafficRouting) scales older ReplicaSets down at once', () => {
  it('on promotion the old stable has no pods left by the time the rollout is Healthy + one pass', () => {
    const world = healthyWorld(aRollout().withReplicas(4).withSteps({ setWeight: 50 }).build());
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.stableRS === hashOf('app:2'));
    const promotedAt = world.now;
    runUntil(world, (w) => replicasOf(w, 'app:1') === 0, 5_000);
    // Not 30 s: without a router the old pods sit behind the one Service and would keep serving.
    expect(world.now - promotedAt).toBeLessThan(1_000);
    expect(world.rollout.status?.phase).toBe('Healthy');
  });

  it('an aborted basic canary loses its pods at once (abortScaleDownDelaySeconds is 0 without a router)', () => {
    const world = healthyWorld(
      aRollout().withReplicas(4).withSteps({ setWeight: 50 }, { pause: {} }).build(),
    );
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    world.patchStatus({ abort: true });
    const abortedAt = world.now;
    runUntil(world, (w) => replicasOf(w, 'app:2') === 0 && replicasOf(w, 'app:1') === 4, 10_000);
    expect(world.now - abortedAt).toBeLessThanOrEqual(3_000);
  });

  it('an explicit scaleDownDelaySeconds is still honoured (a documented extension)', () => {
    const world = healthyWorld(
      aRollout()
        .withReplicas(2)
        .withSteps({ setWeight: 50 })
        .withCanary({ scaleDownDelaySeconds: 20 })
        .build(),
    );
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.stableRS === hashOf('app:2'));
    const promotedAt = world.now;
    runUntil(world, (w) => replicasOf(w, 'app:1') === 0, 60_000);
    expect(world.now - promotedAt).toBeGreaterThanOrEqual(20_000);
  });
});

describe("old ReplicaSets go only while available pods stay at or above replicas - maxUnavailable (Argo's minAvailable)", () => {
  // 3 replicas with Argo's 25 % defaults: maxSurge 1, maxUnavailable 0.
  const bad = (image: string) =>
    image === 'app:1' || image === 'app:2'
      ? ({ kind: 'imagePullBackOff' } as const)
      : ({ kind: 'healthy', readyAfterMs: 1000 } as const);

  it('a bad first revision followed by another bad one keeps the first at full count; the second gets maxSurge', () => {
    for (const steps of [[], [{ setWeight: 50 }, { pause: {} }]]) {
      const world = new InMemoryWorld({
        rollout: aRollout()
          .withReplicas(3)
          .withImage('app:1')
          .withSteps(...structuredClone(steps))
          .build(),
        behaviour: bad,
      });
      runUntil(world, (w) => replicasOf(w, 'app:1') === 3);
      world.setImage('app:2');
      for (let i = 0; i < 40; i++) {
        world.reconcile();
        world.advance(1000);
      }
      expect(replicasOf(world, 'app:1'), `steps ${steps.length}`).toBe(3);
      expect(replicasOf(world, 'app:2'), `steps ${steps.length}`).toBe(1);
    }
  });

  it('a good revision after a bad first one still takes over as its pods become available', () => {
    const world = new InMemoryWorld({
      rollout: aRollout().withReplicas(3).withImage('app:1').build(),
      behaviour: bad,
    });
    runUntil(world, (w) => replicasOf(w, 'app:1') === 3);
    world.setImage('app:3');
    runUntil(world, (w) => w.rollout.status?.phase === 'Healthy' && replicasOf(w, 'app:1') === 0, 120_000);
    expect(replicasOf(world, 'app:3')).toBe(3);
    expect(world.rollout.status?.stableRS).toBe(hashOf('app:3'));
  });
});

describe('the scale subresource reads the pods the rollout runs', () => {
  it('status.HPAReplicas counts every pod of every ReplicaSet, status.selector the rollout selector', () => {
    const world = healthyWorld(aRollout().withReplicas(4).build());
    expect(world.rollout.status?.HPAReplicas).toBe(4);
    expect(world.rollout.status?.selector).toBe('app=web');
  });
});

describe('a progress-deadline abort says so, as Argo', () => {
  it('condition Progressing=False ProgressDeadlineExceeded, a ProgressDeadlineExceeded event, the step kept', () => {
    const world = healthyWorld(
      aRollout()
        .withReplicas(2)
        .withSteps({ setWeight: 50 }, { pause: {} })
        .withProgressDeadline(10, true)
        .build(),
      {
        behaviour: (image) =>
          image === 'app:9' ? { kind: 'imagePullBackOff' } : { kind: 'healthy', readyAfterMs: 1000 },
      },
    );
    world.setImage('app:9');
    runUntil(world, (w) => w.rollout.status?.abort === true, 30_000);
    const status = world.rollout.status ?? {};
    const progressing = status.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(world.events.filter((e) => e.reason === 'ProgressDeadlineExceeded')).toHaveLength(1);
    expect(world.events.filter((e) => e.reason === 'RolloutAborted')).toHaveLength(1);
    // The step that was running when it aborted stays the current one (rollgate status marks it).
    expect(status.currentStepIndex).toBe(0);
    // Carrying the abort out keeps the reason.
    runUntil(world, (w) => replicasOf(w, 'app:9') === 0, 30_000);
    expect(world.rollout.status?.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe(
      'ProgressDeadlineExceeded',
    );
  });

  it('a user abort keeps reason RolloutAborted', () => {
    const world = healthyWorld(
      aRollout().withReplicas(2).withSteps({ setWeight: 50 }, { pause: {} }).build(),
    );
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    world.patchStatus({ abort: true });
    runUntil(world, (w) => w.rollout.status?.phase === 'Degraded');
    expect(world.rollout.status?.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe(
      'RolloutAborted',
    );
    expect(world.events.some((e) => e.reason === 'ProgressDeadlineExceeded')).toBe(false);
  });
});
