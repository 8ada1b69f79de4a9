// One look at a promotion, for the Rollout that changed: its own promotion, or the release it belongs to.
import type { RolloutKey } from '../reconciler/observed-state-reader.ts';
import {
  runPromotion,
  type PromotionDeps,
  type PromotionOutcome,
  type PromotionSpec,
} from './run-promotion.ts';
import { runRelease } from './run-release.ts';

/** A release (`from.together`) is looked at as a whole, whichever of its Rollouts changed. */
export function lookAtPromotion(
  promotion: PromotionSpec,
  key: RolloutKey,
  deps: PromotionDeps,
  options: { dryRun?: boolean } = {},
): Promise<PromotionOutcome> {
  if (promotion.together === true) {
    if (!(promotion.rollouts ?? []).includes(key.name))
      return Promise.resolve({ skipped: 'the release does not carry this Rollout' });
    return runRelease(promotion, key.namespace, deps, options);
  }
  return runPromotion(promotion, key, deps, options);
}
