// Blue-green sub-step: spec.paused holds the update before the switch.
import type { Pass } from '../pass/pass.ts';
import { gatesPassed, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';

/**
 * Before the switch, spec.paused ends the pass Paused ("manually paused"): no gate, promotion or switch.
 * After the switch it holds nothing (the post-promotion analysis and completion go on). The checkpoint in
 * status stays as it was.
 */
export function holdWhilePaused(pass: Pass): Pass {
  if (switched(pass) || !pass.context.spec.paused) return pass;
  return inProgress(pass, '', gatesPassed(pass), true);
}
