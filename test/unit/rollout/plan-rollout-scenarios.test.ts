// Field failures and user verbs, played through planRollout in the in-memory world with a fake clock.
import { describe, it, expect } from 'vitest';
import { INCONCLUSIVE_ANALYSIS_RUN, SCALE_DOWN_DEADLINE_ANNOTATION } from '../../../src/rollout/index.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import type { InMemoryWorld } from '../../builders/in-memory-world.ts';
import { healthyWorld, runUntil } from '../../builders/run-until.ts';
import type { CanaryStep } from '../../../src/manifest/rollout.ts';

const replicasOf = (world: InMemoryWorld, image: string) =>
  [...world.sets.values()].find((set) => set.rs.podTemplateHash === hashOf(image))?.rs.replicas;

describe('F1: a canary whose pods never start is aborted by the progress deadline', () => {
  for (const routerError of [undefined, 'router refused: no healthy upstream']) {
    it(`Degraded within the deadline + one pass, traffic to stable, canary scaled down${routerError ? ' (router failing)' : ''}`, () => {
      const rollout = aRollout()
        .withReplicas(4)
        .withSteps({ setWeight: 25 }, { pause: {} })
        .withProgressDeadline(10, true)
        .build();
      const world = healthyWorld(rollout, {
        behaviour: (image) =>
          image === 'app:9.9' ? { kind: 'imagePullBackOff' } : { kind: 'healthy', readyAfterMs: 1000 },
        ...(routerError !== undefined ? { routerError } : {}),
      });
      const start = world.now;
      world.setImage('app:9.9');
      runUntil(world, (w) => w.rollout.status?.phase === 'Degraded', 30_000);
      expect(world.now - start).toBeLessThanOrEqual(11_000);
      const status = world.rollout.status ?? {};
      expect(status.abort).toBe(true);
      expect(status.message).toMatch(
        /^RolloutAborted: ProgressDeadlineExceeded: ReplicaSet "web-\w+" has timed out/,
      );
      expect(status.message).toContain('ImagePullBackOff: Back-off pulling image "app:9.9"');
      expect(status.message).toMatch(/pod web-\w+-p\d+ container app/);
      expect(status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe(
        'ProgressDeadlineExceeded',
      );
      expect(world.events.map((e) => e.reason)).toEqual(
        expect.arrayContaining(['ProgressDeadlineExceeded', 'RolloutAborted']),
      );
      // Traffic back to stable first, then the canary goes (no abortScaleDownDelaySeconds without a router).
      runUntil(world, (w) => replicasOf(w, 'app:9.9') === 0, 40_000);
      expect(world.now - start).toBeLessThanOrEqual(routerError === undefined ? 12_000 : 45_000);
      if (routerError === undefined) {
        expect(world.trafficWeight).toBe(0);
        expect(world.rollout.status?.canary?.weights?.canary.weight).toBe(0);
      }
      expect(replicasOf(world, 'app:1')).toBe(4);
      expect(world.rollout.status?.stableRS).toBe(hashOf('app:1'));
    });
  }

  it('a manual abort takes effect in one pass while progressing, paused, or waiting for analysis', () => {
    const stepsFor: Record<string, CanaryStep[]> = {
      progressing: [{ setWeight: 50 }],
      paused: [{ setWeight: 25 }, { pause: {} }],
      analysis: [{ setWeight: 25 }, { analysis: { templates: [{ templateName: 'slow' }] } }],
    };
    for (const [phase, steps] of Object.entries(stepsFor)) {
      const rollout = aRollout()
        .withReplicas(3)
        .withSteps(...structuredClone(steps))
        .build();
      const world = healthyWorld(rollout, {
        behaviour: (image) => ({
          kind: 'healthy',
          readyAfterMs: image === 'app:2' && phase === 'progressing' ? 60_000 : 1000,
        }),
        analysisMs: 3_600_000,
      });
      world.setImage('app:2');
      runUntil(world, (w) =>
        phase === 'paused'
          ? w.rollout.status?.phase === 'Paused'
          : phase === 'analysis'
            ? w.runs.size === 1
            : (w.sets.get(`web-${hashOf('app:2')}`)?.rs.replicas ?? 0) > 0,
      );
      world.patchStatus({ abort: true });
      const plan = world.reconcile();
      expect(plan.status.phase, phase).toBe('Degraded');
      expect(plan.status.message, phase).toMatch(/^RolloutAborted: Rollout aborted update to revision/);
      expect(plan.actions.every((action) => action.kind === 'emitEvent')).toBe(true);
      expect(plan.requeueAfterMs).toBe(0);
      const next = world.reconcile();
      expect(next.status.canary?.weights?.canary.weight, phase).toBe(0);
      expect(next.status.canary?.weights?.stable.podTemplateHash, phase).toBe(hashOf('app:1'));
      if (phase === 'analysis') {
        runUntil(world, (w) => [...w.runs.values()].every((run) => run.terminated));
      }
    }
  });
});

describe('F5: crash-looping canary pods that flap Ready do not extend the deadline', () => {
  it('aborts within the deadline + one pass', () => {
    const rollout = aRollout()
      .withReplicas(2)
      .withSteps({ setWeight: 50 }, { pause: {} })
      .withProgressDeadline(10, true)
      .build();
    const world = healthyWorld(rollout, {
      behaviour: (image) =>
        image === 'app:crash'
          ? { kind: 'crashLoop', upMs: 1000, downMs: 2000 }
          : { kind: 'healthy', readyAfterMs: 1000 },
    });
    const start = world.now;
    world.setImage('app:crash');
    runUntil(world, (w) => w.rollout.status?.phase === 'Degraded', 60_000);
    expect(world.now - start).toBeLessThanOrEqual(11_000);
    expect(world.rollout.status?.message).toContain('CrashLoopBackOff');
    expect(world.rollout.status?.abort).toBe(true);
  });

  it('without progressDeadlineAbort it reports ProgressDeadlineExceeded and keeps the stable', () => {
    const rollout = aRollout()
      .withReplicas(2)
      .withSteps({ setWeight: 50 })
      .withProgressDeadline(10, false)
      .build();
    const world = healthyWorld(rollout, {
      behaviour: (image) =>
        image === 'app:bad' ? { kind: 'imagePullBackOff' } : { kind: 'healthy', readyAfterMs: 1000 },
    });
    world.setImage('app:bad');
    const plans = runUntil(world, (w) => w.rollout.status?.phase === 'Degraded', 60_000);
    const status = world.rollout.status ?? {};
    expect(status.abort).toBeUndefined();
    expect(status.message).toMatch(/^ProgressDeadlineExceeded: .*ImagePullBackOff/);
    expect(status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
    expect(
      plans
        .flatMap((p) => p.actions)
        .filter((a) => a.kind === 'emitEvent' && a.reason === 'ProgressDeadlineExceeded'),
    ).toHaveLength(1);
    expect(replicasOf(world, 'app:1')).toBeGreaterThanOrEqual(1);
  });
});

describe('F4: an inconclusive background analysis pauses the rollout', () => {
  it('pauses with InconclusiveAnalysisRun, keeps exactly one run, stays paused, stable unchanged', () => {
    const rollout = aRollout()
      .withReplicas(2)
      .withSteps({ setWeight: 10 }, { pause: { duration: '30s' } })
      .withCanary({ analysis: { templates: [{ templateName: 'always-inconclusive' }] } })
      .build();
    const world = healthyWorld(rollout, { analysisResult: () => 'Inconclusive', analysisMs: 2000 });
    world.setImage('app:2');
    runUntil(world, (w) =>
      (w.rollout.status?.pauseConditions ?? []).some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN),
    );
    const stable = world.rollout.status?.stableRS;
    for (let i = 0; i < 60; i++) {
      world.reconcile();
      world.advance(1000);
    }
    const status = world.rollout.status ?? {};
    expect(status.phase).toBe('Paused');
    expect(status.controllerPause).toBe(true);
    expect(world.runs.size).toBe(1);
    expect(status.stableRS).toBe(stable);
    expect(status.currentStepIndex).toBeLessThanOrEqual(1);
    // Promote leaves that state and starts a fresh run.
    world.patchStatus({ pauseConditions: null });
    const plan = world.reconcile();
    expect(plan.actions).toContainEqual({
      kind: 'deleteAnalysisRun',
      name: `web-${hashOf('app:2')}-2`,
    });
    world.reconcile();
    expect(world.runs.get(`web-${hashOf('app:2')}-2`)?.phase).toBe('Running');
  });
});

describe('F3: old ReplicaSets are always scaled down', () => {
  it('completion writes the deadline with the scale, and the old stable reaches 0 once it passes', () => {
    const rollout = aRollout()
      .withReplicas(3)
      .withSteps({ setWeight: 50 })
      .withCanary({ scaleDownDelaySeconds: 5 })
      .build();
    const world = healthyWorld(rollout);
    world.setImage('app:2');
    const plans = runUntil(world, (w) => w.rollout.status?.stableRS === hashOf('app:2'));
    const completedAt = world.now;
    // The completing pass keeps the old stable's pods and dates their end in the same write.
    const oldStable = `web-${hashOf('app:1')}`;
    expect(plans.at(-1)?.actions).toContainEqual(
      expect.objectContaining({
        kind: 'scaleReplicaSet',
        name: oldStable,
        replicas: replicasOf(world, 'app:1'),
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: new Date(completedAt + 5_000).toISOString() },
      }),
    );
    expect(replicasOf(world, 'app:1')).toBeGreaterThan(0);
    runUntil(world, (w) => (replicasOf(w, 'app:1') ?? 0) === 0, 20_000);
    // Not before the deadline, and soon after it; a dated scale-down is never "repaired".
    expect(world.now - completedAt).toBeGreaterThanOrEqual(5_000);
    expect(world.now - completedAt).toBeLessThanOrEqual(6_000);
    expect(world.events.map((e) => e.reason)).not.toContain('ScaleDownDeadlineRepaired');
    for (const value of world.deadlineAnnotations()) expect(value).not.toBe('');
  });

  it('a ReplicaSet seeded with an empty deadline and pods is scaled down on the next pass, with a Warning', () => {
    const rollout = aRollout().withReplicas(2).build();
    const world = healthyWorld(rollout);
    world.setImage('app:2');
    runUntil(
      world,
      (w) => w.rollout.status?.stableRS === hashOf('app:2') && (replicasOf(w, 'app:1') ?? 0) === 0,
    );
    const old = world.sets.get(`web-${hashOf('app:1')}`);
    if (old === undefined) throw new Error('old ReplicaSet missing');
    old.rs.replicas = 2;
    old.rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION] = '';
    world.advance(5000);
    const plan = world.reconcile();
    expect(plan.actions).toContainEqual(
      expect.objectContaining({ kind: 'scaleReplicaSet', name: old.rs.name.toString(), replicas: 0 }),
    );
    expect(plan.actions).toContainEqual(
      expect.objectContaining({ kind: 'emitEvent', type: 'Warning', reason: 'ScaleDownDeadlineRepaired' }),
    );
    expect(replicasOf(world, 'app:1')).toBe(0);
  });
});

describe('user verbs and supersede', () => {
  const steps: CanaryStep[] = [{ setWeight: 25 }, { pause: {} }, { setWeight: 75 }];
  const canaryWorld = () => {
    const world = healthyWorld(
      aRollout()
        .withReplicas(4)
        .withSteps(...structuredClone(steps))
        .build(),
    );
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    return world;
  };

  it('promote resumes an indefinite pause and the rollout completes', () => {
    const world = canaryWorld();
    expect(world.rollout.status?.pauseConditions?.[0]?.reason).toBe('CanaryPauseStep');
    world.patchStatus({ pauseConditions: null });
    runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
    expect(world.rollout.status?.stableRS).toBe(hashOf('app:2'));
    expect(world.rollout.status?.currentStepIndex).toBe(3);
  });

  it('promote --full skips the remaining steps', () => {
    const world = canaryWorld();
    world.patchStatus({ promoteFull: true });
    const plans = runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
    expect(
      plans
        .flatMap((p) => p.actions)
        .some((a) => a.kind === 'emitEvent' && a.message.includes('setWeight 75')),
    ).toBe(false);
    expect(world.rollout.status?.promoteFull).toBeUndefined();
  });

  it('abort then retry restarts the steps from 0 and can complete', () => {
    const world = canaryWorld();
    world.patchStatus({ abort: true });
    runUntil(world, (w) => replicasOf(w, 'app:2') === 0, 60_000);
    expect(world.rollout.status?.phase).toBe('Degraded');
    world.patchStatus({ abort: false });
    const retry = world.reconcile();
    expect(retry.status.phase).toBe('Progressing');
    expect(retry.status.currentStepIndex).toBe(0);
    expect(retry.status.abortedAt).toBeUndefined();
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    world.patchStatus({ pauseConditions: null });
    runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
    expect(world.rollout.status?.stableRS).toBe(hashOf('app:2'));
  });

  for (const when of ['paused', 'aborted'] as const) {
    it(`a new revision while ${when} supersedes the canary: steps restart, old canary drained, stable kept`, () => {
      const world = canaryWorld();
      if (when === 'aborted') {
        world.patchStatus({ abort: true });
        world.reconcile();
      }
      world.setImage('app:3');
      const plan = world.reconcile();
      expect(plan.status.currentStepIndex).toBe(0);
      expect(plan.status.currentPodHash).toBe(hashOf('app:3'));
      expect(plan.status.stableRS).toBe(hashOf('app:1'));
      expect(plan.status.abort).toBeUndefined();
      expect(plan.status.pauseConditions).toBeUndefined();
      if (when === 'paused') {
        expect(plan.status.supersededPodHash).toBe(hashOf('app:2'));
        expect(plan.actions).toContainEqual(
          expect.objectContaining({ kind: 'emitEvent', reason: 'RolloutSuperseded' }),
        );
      }
      runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
      expect(replicasOf(world, 'app:2')).toBe(0);
      world.patchStatus({ pauseConditions: null });
      runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
      expect(world.rollout.status?.stableRS).toBe(hashOf('app:3'));
    });
  }

  it('spec.paused holds the steps and stops the deadline clock', () => {
    const rollout = aRollout()
      .withReplicas(2)
      .withSteps({ setWeight: 50 }, { pause: { duration: 5 } })
      .withProgressDeadline(10, true)
      .build();
    const world = healthyWorld(rollout, {
      behaviour: (image) =>
        image === 'app:bad' ? { kind: 'imagePullBackOff' } : { kind: 'healthy', readyAfterMs: 1000 },
    });
    world.rollout = { ...world.rollout, spec: { ...world.rollout.spec, paused: true } };
    world.setImage('app:bad');
    for (let i = 0; i < 30; i++) {
      world.reconcile();
      world.advance(1000);
    }
    expect(world.rollout.status?.phase).toBe('Paused');
    expect(world.rollout.status?.abort).toBeUndefined();
  });
});

describe('rollback and scaling', () => {
  it('going back to the stable template mid-canary drains the canary without steps', () => {
    const world = healthyWorld(
      aRollout().withReplicas(3).withSteps({ setWeight: 50 }, { pause: {} }).build(),
    );
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    world.setImage('app:1');
    const plans = runUntil(
      world,
      (w) =>
        w.rollout.status?.phase === 'Healthy' &&
        (replicasOf(w, 'app:2') ?? 0) === 0 &&
        replicasOf(w, 'app:1') === 3,
    );
    expect(plans[0]?.actions).toContainEqual(
      expect.objectContaining({ kind: 'emitEvent', reason: 'RolloutSuperseded' }),
    );
    expect(world.rollout.status?.stableRS).toBe(hashOf('app:1'));
    expect(world.rollout.status?.supersededPodHash).toBe(hashOf('app:2'));
  });

  it('changing spec.replicas on a healthy rollout scales the stable within the surge', () => {
    const world = healthyWorld(aRollout().withReplicas(2).build());
    world.rollout = { ...world.rollout, spec: { ...world.rollout.spec, replicas: 5 } };
    const plan = world.reconcile();
    expect(plan.actions).toContainEqual(expect.objectContaining({ kind: 'scaleReplicaSet', replicas: 5 }));
    runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
    expect(world.rollout.status?.availableReplicas).toBe(5);
  });
});

describe('idempotence', () => {
  it('a pass over its own result changes nothing and writes nothing once settled', () => {
    const world = healthyWorld(
      aRollout().withReplicas(3).withSteps({ setWeight: 50 }, { pause: {} }).build(),
    );
    world.setImage('app:2');
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    const first = world.reconcile();
    const second = world.reconcile();
    expect(first.actions).toEqual([]);
    expect(second.actions).toEqual([]);
    expect(second.status).toEqual(world.rollout.status);
    expect(second.status).toEqual(first.status);
  });
});
