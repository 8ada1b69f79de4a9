// Replica arithmetic: exact tables for small rollouts and a property test over replicas 0–10 × weight 0–100.
import { describe, it, expect } from 'vitest';
import {
  canaryReplicaCounts,
  resolveReplicaBudget,
  type CanaryReplicaCountsInput,
  type ReplicaBudget,
} from '../../../src/rollout/canary-replica-counts.ts';
import { InvalidSpecError } from '../../../src/rollout/invalid-spec-error.ts';

interface World {
  canary: { replicas: number; available: number };
  stable: { replicas: number; available: number };
}

/**
 * Drives the arithmetic from `start` until nothing moves, checking the safety bounds after every move.
 * `lag` = passes a new pod needs before it counts as available.
 */
function converge(
  replicas: number,
  weight: number,
  budget: ReplicaBudget,
  start: World,
  lag: number,
  extra: Partial<CanaryReplicaCountsInput> = {},
): { world: World; passes: number; target: { canary: number; stable: number } } {
  let world = structuredClone(start);
  const pending: Array<{ rs: 'canary' | 'stable'; due: number }> = [];
  for (let pass = 0; pass < 200; pass++) {
    for (let i = pending.length - 1; i >= 0; i--) {
      const pod = pending[i];
      if (pod !== undefined && pod.due <= pass) {
        pending.splice(i, 1);
        world[pod.rs].available = Math.min(world[pod.rs].available + 1, world[pod.rs].replicas);
      }
    }
    const result = canaryReplicaCounts({ replicas, weight, budget, current: world, ...extra });
    const { next, ceiling, floor } = result;
    const totalBefore = world.canary.replicas + world.stable.replicas;
    const availableBefore = world.canary.available + world.stable.available;
    const totalAfter = next.canary + next.stable;
    // Removed pods are the unavailable ones first, so what stays available is min(available, next).
    const availableAfter =
      Math.min(world.canary.available, next.canary) + Math.min(world.stable.available, next.stable);
    expect(totalAfter, `pods above the surge ceiling (R=${replicas} w=${weight})`).toBeLessThanOrEqual(
      Math.max(ceiling, totalBefore),
    );
    expect(availableAfter, `available below the floor (R=${replicas} w=${weight})`).toBeGreaterThanOrEqual(
      Math.min(floor, availableBefore),
    );
    const moved = next.canary !== world.canary.replicas || next.stable !== world.stable.replicas;
    const grownCanary = next.canary - world.canary.replicas;
    const grownStable = next.stable - world.stable.replicas;
    world = {
      canary: { replicas: next.canary, available: Math.min(world.canary.available, next.canary) },
      stable: { replicas: next.stable, available: Math.min(world.stable.available, next.stable) },
    };
    for (let i = 0; i < grownCanary; i++) pending.push({ rs: 'canary', due: pass + 1 + lag });
    for (let i = 0; i < grownStable; i++) pending.push({ rs: 'stable', due: pass + 1 + lag });
    if (!moved && pending.length === 0) return { world, passes: pass, target: result.target };
  }
  throw new Error(`no convergence for R=${replicas} w=${weight}`);
}

const budgets: Array<[string, (r: number) => ReplicaBudget]> = [
  ['defaults 25%/25%', (r) => resolveReplicaBudget(r, '25%', '25%')],
  ['surge 1, unavailable 0', (r) => resolveReplicaBudget(r, 1, 0)],
  ['surge 0, unavailable 1', (r) => resolveReplicaBudget(r, 0, 1)],
  ['surge 50%, unavailable 0', (r) => resolveReplicaBudget(r, '50%', 0)],
];

describe('canaryReplicaCounts property: replicas 0–10 × weight 0–100', () => {
  for (const [label, budgetFor] of budgets) {
    it(`${label}: from a healthy stable, stays within surge/floor and reaches the target`, () => {
      for (let replicas = 0; replicas <= 10; replicas++) {
        for (let weight = 0; weight <= 100; weight++) {
          const budget = budgetFor(replicas);
          for (const lag of [0, 2]) {
            const start: World = {
              canary: { replicas: 0, available: 0 },
              stable: { replicas, available: replicas },
            };
            const { world, target } = converge(replicas, weight, budget, start, lag);
            expect(world.canary.replicas).toBe(target.canary);
            expect(world.stable.replicas).toBe(target.stable);
            if (weight === 0) expect(world.canary.replicas).toBe(0);
            if (weight === 100) {
              expect(world.canary.replicas).toBe(replicas);
              expect(world.stable.replicas).toBe(0);
            }
            if (
              weight > 0 &&
              weight < 100 &&
              replicas > 0 &&
              target.canary + target.stable <= replicas + budget.maxSurge
            ) {
              expect(world.canary.replicas).toBeGreaterThanOrEqual(1);
            }
            // The canary's share of pods never exceeds what the weight asks for by more than one pod.
            expect(world.canary.replicas).toBeLessThanOrEqual(Math.ceil((replicas * weight) / 100));
          }
        }
      }
    });

    it(`${label}: from any weight back to 0 (abort) and on to 100 (promote)`, () => {
      for (let replicas = 0; replicas <= 10; replicas++) {
        for (let weight = 0; weight <= 100; weight += 5) {
          const budget = budgetFor(replicas);
          const healthy: World = {
            canary: { replicas: 0, available: 0 },
            stable: { replicas, available: replicas },
          };
          const mid = converge(replicas, weight, budget, healthy, 1).world;
          const back = converge(replicas, 0, budget, mid, 1).world;
          expect(back).toEqual({
            canary: { replicas: 0, available: 0 },
            stable: { replicas, available: replicas },
          });
          const full = converge(replicas, 100, budget, mid, 1).world;
          expect(full).toEqual({
            canary: { replicas, available: replicas },
            stable: { replicas: 0, available: 0 },
          });
        }
      }
    });
  }
});

describe('canaryReplicaCounts for 1, 2 and 3 replicas (defaults)', () => {
  const rows: Array<{ replicas: number; weight: number; canary: number; stable: number }> = [
    { replicas: 1, weight: 0, canary: 0, stable: 1 },
    { replicas: 1, weight: 10, canary: 1, stable: 1 },
    { replicas: 1, weight: 50, canary: 1, stable: 1 },
    { replicas: 1, weight: 99, canary: 1, stable: 1 },
    { replicas: 1, weight: 100, canary: 1, stable: 0 },
    { replicas: 2, weight: 20, canary: 1, stable: 2 },
    { replicas: 2, weight: 50, canary: 1, stable: 1 },
    { replicas: 2, weight: 100, canary: 2, stable: 0 },
    { replicas: 3, weight: 10, canary: 1, stable: 3 },
    { replicas: 3, weight: 34, canary: 2, stable: 2 },
    { replicas: 3, weight: 50, canary: 2, stable: 2 },
    { replicas: 3, weight: 67, canary: 3, stable: 1 },
    { replicas: 3, weight: 100, canary: 3, stable: 0 },
  ];
  for (const row of rows) {
    it(`replicas ${row.replicas}, weight ${row.weight} → canary ${row.canary}, stable ${row.stable}`, () => {
      const budget = resolveReplicaBudget(row.replicas, '25%', '25%');
      const start: World = {
        canary: { replicas: 0, available: 0 },
        stable: { replicas: row.replicas, available: row.replicas },
      };
      const { world } = converge(row.replicas, row.weight, budget, start, 1);
      expect(world.canary.replicas).toBe(row.canary);
      expect(world.stable.replicas).toBe(row.stable);
    });
  }

  it('with 1 replica, the stable pod stays until the canary pod is available', () => {
    const budget = resolveReplicaBudget(1, '25%', '25%');
    const first = canaryReplicaCounts({
      replicas: 1,
      weight: 100,
      budget,
      current: { canary: { replicas: 0, available: 0 }, stable: { replicas: 1, available: 1 } },
    });
    expect(first.next).toEqual({ canary: 1, stable: 1, others: [] });
    const waiting = canaryReplicaCounts({
      replicas: 1,
      weight: 100,
      budget,
      current: { canary: { replicas: 1, available: 0 }, stable: { replicas: 1, available: 1 } },
    });
    expect(waiting.next).toEqual({ canary: 1, stable: 1, others: [] });
    const ready = canaryReplicaCounts({
      replicas: 1,
      weight: 100,
      budget,
      current: { canary: { replicas: 1, available: 1 }, stable: { replicas: 1, available: 1 } },
    });
    expect(ready.next).toEqual({ canary: 1, stable: 0, others: [] });
  });
});

describe('canaryReplicaCounts options', () => {
  const budget = { maxSurge: 1, maxUnavailable: 0 };
  it('minPodsPerReplicaSet raises a running ReplicaSet to the minimum', () => {
    const result = canaryReplicaCounts({
      replicas: 10,
      weight: 10,
      budget: { maxSurge: 3, maxUnavailable: 0 },
      minPodsPerReplicaSet: 2,
      current: { canary: { replicas: 0, available: 0 }, stable: { replicas: 10, available: 10 } },
    });
    expect(result.target).toEqual({ canary: 2, stable: 9 });
    expect(result.next.canary).toBe(2);
  });

  it('setCanaryScale replicas overrides the canary count but not the stable one', () => {
    const result = canaryReplicaCounts({
      replicas: 4,
      weight: 0,
      budget: { maxSurge: 2, maxUnavailable: 0 },
      canaryScale: { replicas: 2 },
      current: { canary: { replicas: 0, available: 0 }, stable: { replicas: 4, available: 4 } },
    });
    expect(result.target).toEqual({ canary: 2, stable: 4 });
  });

  it('a setCanaryScale below the weight never leaves the targets under the availability floor', () => {
    const result = canaryReplicaCounts({
      replicas: 4,
      weight: 50,
      budget: { maxSurge: 2, maxUnavailable: 0 },
      canaryScale: { replicas: 1 },
      current: { canary: { replicas: 1, available: 1 }, stable: { replicas: 3, available: 3 } },
    });
    expect(result.target).toEqual({ canary: 1, stable: 3 });
    expect(result.next).toEqual({ canary: 1, stable: 3, others: [] });
  });

  it('holdCanary keeps canary pods during an abort delay while the stable grows into free room', () => {
    const result = canaryReplicaCounts({
      replicas: 4,
      weight: 0,
      budget,
      holdCanary: true,
      current: { canary: { replicas: 2, available: 0 }, stable: { replicas: 2, available: 2 } },
    });
    expect(result.next).toEqual({ canary: 2, stable: 3, others: [] });
  });

  it('old ReplicaSets whose deadline passed are scaled down first, within the floor', () => {
    const result = canaryReplicaCounts({
      replicas: 4,
      weight: 0,
      budget,
      current: {
        canary: { replicas: 0, available: 0 },
        stable: { replicas: 2, available: 2 },
        others: [
          { replicas: 2, available: 2, scaleDown: true },
          { replicas: 1, available: 1, scaleDown: false },
        ],
      },
    });
    // available 5, floor 4: one old pod may go; the undue one is kept.
    expect(result.next.others).toEqual([1, 1]);
    expect(result.next.stable).toBe(2);
  });

  it('unavailable pods of an old ReplicaSet go at once, whatever the floor', () => {
    const result = canaryReplicaCounts({
      replicas: 2,
      weight: 0,
      budget,
      current: {
        canary: { replicas: 0, available: 0 },
        stable: { replicas: 2, available: 1 },
        others: [{ replicas: 2, available: 0, scaleDown: true }],
      },
    });
    expect(result.next.others).toEqual([0]);
  });
});

describe('resolveReplicaBudget', () => {
  it('rounds surge up and unavailability down', () => {
    expect(resolveReplicaBudget(10, '25%', '25%')).toEqual({ maxSurge: 3, maxUnavailable: 2 });
    expect(resolveReplicaBudget(1, '25%', '25%')).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(resolveReplicaBudget(5, 2, '0')).toEqual({ maxSurge: 2, maxUnavailable: 0 });
  });
  it('never lets both be 0', () => {
    expect(resolveReplicaBudget(3, 0, 0)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
  });
  it('refuses values that are neither integers nor percentages', () => {
    expect(() => resolveReplicaBudget(3, 'lots', 0)).toThrow(InvalidSpecError);
    expect(() => resolveReplicaBudget(3, 1, '-5%')).toThrow(/maxUnavailable/);
  });
});
