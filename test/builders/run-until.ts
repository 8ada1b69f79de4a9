// Drives an InMemoryWorld pass by pass until a condition holds, with fake time between idle passes.
import type { RolloutPlan } from '../../src/rollout/index.ts';
import type { Rollout } from '../../src/manifest/rollout.ts';
import { InMemoryWorld, type WorldOptions } from './in-memory-world.ts';

/**
 * Whether the world's last pass is followed by another at once, as the reconciler's is: only writes that
 * changed something count, the status write included, as in the executor (a pass at rest holds its
 * traffic weights and the router writes nothing; a failing router's retry changes nothing: both wait,
 * like any wait), and a pass cut short by a refused write is planned again at once, as after a 409.
 */
export function followsAtOnce(world: InMemoryWorld): boolean {
  const { changed, statusChanged, refused } = world.lastPass;
  return changed > 0 || statusChanged || refused;
}

/**
 * Reconciles until `until` holds (returning every pass's plan) or `maxMs` of fake time passed (throwing);
 * 1 s ticks whenever a pass changed nothing.
 */
export function runUntil(
  world: InMemoryWorld,
  until: (world: InMemoryWorld) => boolean,
  maxMs = 600_000,
): RolloutPlan[] {
  const plans: RolloutPlan[] = [];
  const end = world.now + maxMs;
  for (let guard = 0; guard < 5000 && world.now <= end; guard++) {
    const plan = world.reconcile();
    plans.push(plan);
    if (until(world)) return plans;
    if (!followsAtOnce(world)) world.advance(1000);
  }
  throw new Error(`condition not reached; status: ${JSON.stringify(world.rollout.status)}`);
}

/** A world whose `rollout` has been reconciled until it is Healthy. */
export function healthyWorld(rollout: Rollout, options: Partial<WorldOptions> = {}): InMemoryWorld {
  const world = new InMemoryWorld({ rollout, ...options });
  runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
  return world;
}
