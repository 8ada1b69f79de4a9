// Restart (spec.restartAt): the pure sub-planner, then whole-planner simulations with invariants every pass.
import { describe, it, expect } from 'vitest';
import {
  InvalidSpecError,
  RESTART_RECHECK_MS,
  planRestart,
  planRollout,
  type ObservedPod,
  type ObservedReplicaSet,
  type RestartInput,
} from '../../../src/rollout/index.ts';
import { aPod, aReplicaSet, anObservedState } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import { InMemoryWorld } from '../../builders/in-memory-world.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const RESTART_AT = iso(100);

/** A ready pod of `image` created at second `createdAt` (relative to T0). */
function podOf(image: string, name: string, createdAt: number, ready = true): ObservedPod {
  return { ...aPod(name, image, { ready }), uid: `uid-${name}`, creationTimestamp: iso(createdAt) };
}

function stableSet(replicas: number, available = replicas): ObservedReplicaSet {
  return aReplicaSet('web', 'app:1', { replicas, available });
}

/** A restart of a healthy 4-replica stable; `allReplicaSets` defaults to the restarted ones. */
function input(overrides: Partial<RestartInput> = {}): RestartInput {
  const replicaSets = overrides.replicaSets ?? [stableSet(4)];
  return {
    restartAt: RESTART_AT,
    restartedAt: undefined,
    now: new Date(T0 + 200_000),
    newRevision: false,
    replicaSets,
    allReplicaSets: replicaSets.filter((rs) => rs !== undefined),
    desiredReplicas: 4,
    pods: [
      podOf('app:1', 'web-a', 10),
      podOf('app:1', 'web-b', 5),
      podOf('app:1', 'web-c', 20),
      podOf('app:1', 'web-d', 30),
    ],
    terminatingPods: 0,
    maxUnavailable: 1,
    reshaping: false,
    ...overrides,
  };
}

/** A restart still under way that evicts nothing this pass: no restartedAt, a look again soon. */
const NOT_YET = { evictions: [], events: [], wakeAtMs: T0 + 200_000 + RESTART_RECHECK_MS };

const evicted = (plan: ReturnType<typeof planRestart>) => plan.evictions.map((e) => e.name);

describe('planRestart', () => {
  it('does nothing without spec.restartAt, or once status.restartedAt has caught up with it', () => {
    expect(planRestart(input({ restartAt: undefined }))).toEqual({ evictions: [], events: [] });
    expect(planRestart(input({ restartedAt: RESTART_AT }))).toEqual({
      evictions: [],
      events: [],
    });
    expect(planRestart(input({ restartedAt: iso(150) })).evictions).toEqual([]);
  });

  it('a restart scheduled in the future evicts nothing and wakes at its time', () => {
    const plan = planRestart(input({ now: new Date(T0 + 40_000) }));
    expect(plan.evictions).toEqual([]);
    expect(plan.wakeAtMs).toBe(T0 + 100_000);
  });

  it('evicts the oldest pod first, at most maxUnavailable at a time, conditional on its uid', () => {
    const one = planRestart(input());
    expect(one.evictions).toEqual([
      { kind: 'evictPod', name: 'web-b', uid: 'uid-web-b', podTemplateHash: hashOf('app:1') },
    ]);
    expect(one.wakeAtMs).toBe(T0 + 200_000 + RESTART_RECHECK_MS);
    expect(one.events[0]?.message).toContain(`Restarting pods created before ${RESTART_AT}: evicting web-b`);
    expect(evicted(planRestart(input({ maxUnavailable: 2 })))).toEqual(['web-b', 'web-a']);
  });

  it('with maxUnavailable 0 still restarts, one pod at a time (as Argo Rollouts)', () => {
    expect(evicted(planRestart(input({ maxUnavailable: 0 })))).toEqual(['web-b']);
  });

  it('waits while pods are unavailable or terminating: a restart never takes more than the budget', () => {
    const notReady = input({
      pods: [
        podOf('app:1', 'web-a', 10),
        podOf('app:1', 'web-b', 5, false),
        podOf('app:1', 'web-c', 20),
        podOf('app:1', 'web-d', 30),
      ],
    });
    expect(planRestart(notReady).evictions).toEqual([]);
    // Still under way: not done, and looked at again soon.
    expect(planRestart(notReady)).toEqual({ ...NOT_YET });
    expect(planRestart(input({ terminatingPods: 1 })).evictions).toEqual([]);
    // The ReplicaSet's status still says 4 available, but only 3 pods are listed: one is already gone.
    const gone = input({ pods: input().pods.slice(1) });
    expect(planRestart(gone).evictions).toEqual([]);
    // A larger budget leaves room for one more.
    expect(evicted(planRestart({ ...gone, maxUnavailable: 2 }))).toEqual(['web-b']);
  });

  it('counts capacity against spec.replicas: a canary step already using the budget leaves none', () => {
    const canary = aReplicaSet('web', 'app:2', { replicas: 1 });
    const stable = stableSet(3);
    const pods = [...input().pods.slice(0, 3), podOf('app:2', 'web-canary', 150)];
    const atFloor = input({
      replicaSets: [stable, canary],
      allReplicaSets: [stable, canary],
      desiredReplicas: 5,
      pods,
    });
    expect(planRestart(atFloor).evictions).toEqual([]);
    // An old ReplicaSet's available pods still serve: they count toward capacity.
    const old = aReplicaSet('web', 'app:0', { replicas: 1 });
    const withOld = {
      ...atFloor,
      allReplicaSets: [stable, canary, old],
      pods: [...pods, podOf('app:0', 'web-old', 1)],
    };
    expect(evicted(planRestart(withOld))).toEqual(['web-b']);
  });

  it('waits while the pass reshapes ReplicaSets', () => {
    const plan = planRestart(input({ reshaping: true }));
    expect(plan).toEqual({ ...NOT_YET });
  });

  it('restarts the stable ReplicaSet first, then the canary', () => {
    const canary = aReplicaSet('web', 'app:2', { replicas: 1 });
    const pods = [...input().pods, podOf('app:2', 'web-canary', 1)];
    const first = planRestart(input({ replicaSets: [stableSet(4), canary], pods, maxUnavailable: 5 }));
    expect(evicted(first)).toEqual(['web-b', 'web-a', 'web-c', 'web-d']);
    const stableDone = [
      podOf('app:1', 'web-e', 150),
      podOf('app:1', 'web-f', 150),
      podOf('app:1', 'web-g', 150),
      podOf('app:1', 'web-h', 150),
      podOf('app:2', 'web-canary', 1),
    ];
    expect(evicted(planRestart(input({ replicaSets: [stableSet(4), canary], pods: stableDone })))).toEqual([
      'web-canary',
    ]);
  });

  it('leaves ReplicaSets on their way out alone, and a pod without a creation time counts as old', () => {
    const old = aReplicaSet('web', 'app:0', { replicas: 0 });
    const pods: ObservedPod[] = [
      podOf('app:0', 'web-old', 1),
      ...['e', 'f', 'g'].map((s) => podOf('app:1', `web-${s}`, 150)),
      { ...aPod('web-h', 'app:1'), uid: 'uid-web-h' },
    ];
    expect(evicted(planRestart(input({ replicaSets: [stableSet(4), old], pods })))).toEqual(['web-h']);
  });

  it('completes once every pod is newer and available again: status.restartedAt = spec.restartAt', () => {
    const fresh = ['e', 'f', 'g', 'h'].map((s) => podOf('app:1', `web-${s}`, 150));
    const waiting = planRestart(input({ pods: fresh, terminatingPods: 1 }));
    expect(waiting.restartedAt).toBeUndefined();
    expect(waiting.wakeAtMs).toBe(T0 + 200_000 + RESTART_RECHECK_MS);
    const done = planRestart(input({ pods: fresh }));
    expect(done.restartedAt).toBe(RESTART_AT);
    expect(done.events).toEqual([
      expect.objectContaining({
        reason: 'RolloutRestarted',
        message: `All pods created before ${RESTART_AT} were replaced`,
      }),
    ]);
  });

  it('a new revision cancels the restart (its pods are new anyway)', () => {
    const plan = planRestart(input({ newRevision: true }));
    expect(plan.evictions).toEqual([]);
    expect(plan.restartedAt).toBe(RESTART_AT);
    expect(plan.events[0]?.reason).toBe('RestartCancelled');
  });

  it('refuses a restartAt that is not a time, naming the field', () => {
    expect(() => planRestart(input({ restartAt: 'tomorrow' }))).toThrow(InvalidSpecError);
    expect(() => planRestart(input({ restartAt: 'tomorrow' }))).toThrow(/spec\.restartAt/);
  });
});

describe('planRollout with spec.restartAt', () => {
  it('an unparsable restartAt is InvalidSpec, with no actions', () => {
    const rollout = aRollout().stableAtCurrent().build();
    rollout.spec.restartAt = 'soon';
    const plan = planRollout(
      rollout,
      anObservedState(rollout).withReplicaSet('app:1', { replicas: 4 }).build(),
      new Date(T0),
    );
    expect(plan.actions).toEqual([]);
    expect(plan.status.conditions?.find((c) => c.type === 'InvalidSpec')?.message).toContain(
      'spec.restartAt',
    );
  });

  it('a restartAt still ahead is when a healthy rollout is looked at again, and why', () => {
    const rollout = aRollout().stableAtCurrent().build();
    rollout.spec.restartAt = RESTART_AT;
    const plan = planRollout(
      rollout,
      anObservedState(rollout).withReplicaSet('app:1', { replicas: 1 }).build(),
      new Date(T0 + 40_000),
    );
    expect(plan.requeueAfterMs).toBe(60_000);
    expect(plan.requeueReason).toBe('restart');
  });

  /** Drives the world one second at a time until restartedAt is set; checks capacity after every pass. */
  function runRestart(world: InMemoryWorld, replicas: number, floor: number, limitSeconds = 300): number {
    let passes = 0;
    for (let second = 0; second < limitSeconds; second += 1) {
      world.reconcile();
      passes += 1;
      expect(world.totals().available, `available pods at pass ${passes}`).toBeGreaterThanOrEqual(floor);
      expect(world.totals().pods).toBeLessThanOrEqual(replicas + 1);
      if (world.rollout.status?.restartedAt !== undefined) return passes;
      world.advance(1000);
    }
    throw new Error(`restart did not complete in ${limitSeconds} s`);
  }

  it('a healthy rollout replaces every pod, one at a time, never below replicas - maxUnavailable', () => {
    const world = new InMemoryWorld({ rollout: aRollout().withReplicas(4).build(), start: T0 });
    for (let i = 0; i < 5; i += 1) {
      world.reconcile();
      world.advance(1000);
    }
    expect(world.rollout.status?.phase).toBe('Healthy');
    const restartAt = new Date(world.now).toISOString();
    world.advance(1000);
    world.patchSpec({ restartAt });
    runRestart(world, 4, 3);
    expect(world.rollout.status?.restartedAt).toBe(restartAt);
    expect(world.rollout.status?.phase).toBe('Healthy');
    expect(world.podAges().every((pod) => pod.createdAt >= Date.parse(restartAt))).toBe(true);
    expect(world.sets.size).toBe(1);
    expect(world.events.map((e) => e.reason)).toContain('RolloutRestarted');
    // Restarted once: a later pass leaves the pods alone.
    const names = world.podAges().map((pod) => pod.name);
    world.advance(60_000);
    world.reconcile();
    expect(world.podAges().map((pod) => pod.name)).toEqual(names);
  });

  it('a paused canary restarts stable then canary pods and stays paused at its step and weight', () => {
    const world = new InMemoryWorld({
      rollout: aRollout().withReplicas(4).withSteps({ setWeight: 25 }, { pause: {} }).build(),
      start: T0,
    });
    for (let i = 0; i < 5; i += 1) {
      world.reconcile();
      world.advance(1000);
    }
    world.setImage('app:2');
    for (let i = 0; i < 10; i += 1) {
      world.reconcile();
      world.advance(1000);
    }
    expect(world.rollout.status?.phase).toBe('Paused');
    const weight = world.trafficWeight;
    const restartAt = new Date(world.now).toISOString();
    world.advance(1000);
    world.patchSpec({ restartAt });
    const order: string[] = [];
    const before = new Set(world.podAges().map((pod) => pod.name));
    for (let second = 0; second < 300 && world.rollout.status?.restartedAt === undefined; second += 1) {
      const plan = world.reconcile();
      for (const action of plan.actions) if (action.kind === 'evictPod') order.push(action.podTemplateHash);
      expect(world.totals().available).toBeGreaterThanOrEqual(3);
      world.advance(1000);
    }
    expect(world.rollout.status?.restartedAt).toBe(restartAt);
    expect(order.indexOf(hashOf('app:2'))).toBeGreaterThan(order.lastIndexOf(hashOf('app:1')));
    expect(world.podAges().some((pod) => before.has(pod.name))).toBe(false);
    expect(world.rollout.status?.phase).toBe('Paused');
    expect(world.rollout.status?.currentStepIndex).toBe(1);
    expect(world.trafficWeight).toBe(weight);
  });

  it('a new template during a restart cancels it and the canary proceeds', () => {
    const world = new InMemoryWorld({
      rollout: aRollout().withReplicas(4).withSteps({ setWeight: 50 }).build(),
      start: T0,
    });
    for (let i = 0; i < 5; i += 1) {
      world.reconcile();
      world.advance(1000);
    }
    const restartAt = new Date(world.now).toISOString();
    world.advance(1000);
    world.patchSpec({ restartAt });
    world.reconcile();
    expect(world.writes.some((action) => action.kind === 'evictPod')).toBe(true);
    world.setImage('app:2');
    world.reconcile();
    expect(world.rollout.status?.restartedAt).toBe(restartAt);
    expect(world.events.map((e) => e.reason)).toContain('RestartCancelled');
    for (let i = 0; i < 60; i += 1) {
      world.advance(1000);
      world.reconcile();
    }
    expect(world.rollout.status?.stableRS).toBe(hashOf('app:2'));
    expect(world.rollout.status?.phase).toBe('Healthy');
  });
});
