// Drives an InMemoryWorld pass by pass until a condition holds, with fake time between idle passes.
import type { RolloutPlan } from '../../src/rollout/index.ts';
import type { Rollout } from '../../src/spec/rollout.ts';
import { InMemoryWorld, type WorldOptions } from './in-memory-world.ts';

/**
 * Reconciles until `until` holds (returning every pass's plan) or `maxMs` of fake time passed (throwing);
 * 1 s ticks whenever a pass wrote nothing.
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
    // A pass whose only write is a retry of a failing router waits for its requeue, like any wait.
    const wrote = plan.actions.some(
      (action) =>
        action.kind !== 'emitEvent' &&
        !(action.kind === 'setTrafficWeights' && world.trafficError !== undefined),
    );
    if (!wrote) world.advance(1000);
  }
  throw new Error(`condition not reached; status: ${JSON.stringify(world.rollout.status)}`);
}

/** A world whose `rollout` has been reconciled until it is Healthy. */
export function healthyWorld(rollout: Rollout, options: Partial<WorldOptions> = {}): InMemoryWorld {
  const world = new InMemoryWorld({ rollout, ...options });
  runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
  return world;
}
