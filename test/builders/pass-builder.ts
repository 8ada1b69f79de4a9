// Test builder for one planner pass: the pass a sub-step receives, from a rollout and what was observed.
import type { ObservedState } from '../../src/rollout/index.ts';
import { startPass, type Pass } from '../../src/rollout/pass/pass.ts';
import { planRevision } from '../../src/rollout/plan-revision.ts';
import { readBlueGreenContext } from '../../src/rollout/blue-green/blue-green-context.ts';
import { readRolloutContext } from '../../src/rollout/rollout-context.ts';

/** The pass planRollout would start from for `observed` at `now`, before any sub-step ran. */
export function aPass(observed: ObservedState, now: Date): Pass {
  // As planRollout: a blue-green rollout's context names its active and preview Services.
  const context =
    observed.rollout.spec.strategy.blueGreen !== undefined
      ? readBlueGreenContext(observed.rollout, observed, now)
      : readRolloutContext(observed.rollout, observed, now);
  return startPass(context, planRevision(context));
}
