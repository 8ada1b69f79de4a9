// Reads the pass context of a blue-green Rollout: the shared context, with the active/preview Services as its two.
import type { Rollout } from '../../manifest/rollout.ts';
import { InvalidSpecError } from '../invalid-spec-error.ts';
import type { ObservedState } from '../observed-state.ts';
import { readRolloutContext, type RolloutContext } from '../rollout-context.ts';

/**
 * The context every shared sub-step reads, for a blue-green Rollout. The steady state (first deploy, or
 * back on the stable) is shared with the canary and points its two Services at the stable revision: here
 * they are the active Service (in the stable's place) and the preview Service (in the canary's). There is
 * no step list. `rollout` stays the real object: blue-green sub-steps read strategy.blueGreen from it.
 *
 * @throws InvalidSpecError when strategy.blueGreen lacks activeService or reuses it as the preview.
 */
export function readBlueGreenContext(rollout: Rollout, observed: ObservedState, now: Date): RolloutContext {
  const blueGreen = rollout.spec.strategy.blueGreen;
  const field = 'spec.strategy.blueGreen';
  if (blueGreen === undefined) throw new InvalidSpecError('a blueGreen strategy is required', field);
  if (typeof blueGreen.activeService !== 'string' || blueGreen.activeService === '')
    throw new InvalidSpecError('activeService is required', `${field}.activeService`);
  if (blueGreen.previewService === blueGreen.activeService)
    throw new InvalidSpecError('must differ from activeService', `${field}.previewService`);
  const asShared: Rollout = {
    ...rollout,
    spec: {
      ...rollout.spec,
      strategy: {
        canary: {
          stableService: blueGreen.activeService,
          ...(blueGreen.previewService !== undefined ? { canaryService: blueGreen.previewService } : {}),
          // Blue-green never runs fewer pods than spec.replicas (Argo's blueGreen.maxUnavailable, default 0).
          maxSurge: '100%',
          maxUnavailable: blueGreen.maxUnavailable ?? 0,
        },
      },
    },
  };
  return { ...readRolloutContext(asShared, observed, now), rollout };
}
