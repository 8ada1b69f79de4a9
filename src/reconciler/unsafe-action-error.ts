// The planner asked the executor for a write it refuses to send.
import type { RolloutAction } from '../rollout/index.ts';

/** The planner asked for something impossible or unsafe (e.g. an empty scale-down deadline): never sent; a human must look. */
export class UnsafeActionError extends Error {
  override readonly name = 'UnsafeActionError';
  readonly code = 'kube.unsafe_action';
  constructor(
    readonly action: RolloutAction,
    reason: string,
  ) {
    super(`refusing ${action.kind}: ${reason}`);
  }
}
