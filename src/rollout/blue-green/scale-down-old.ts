// Blue-green sub-step: old ReplicaSets whose scale-down delay is over (or beyond the revision limit) go to 0.
import { amend, type Pass } from '../pass/pass.ts';
import { oldBlueGreenWrites } from './old-replica-sets.ts';

/**
 * Scales down the old ReplicaSets (neither stable nor new) that are due, never one the active Service
 * selects, with their events (see {@link oldBlueGreenWrites}). Never ends the pass.
 */
export function scaleDownOld(pass: Pass): Pass {
  const old = oldBlueGreenWrites(pass);
  return amend(pass, { actions: old.actions, events: old.events });
}
