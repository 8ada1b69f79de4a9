// The error for a Rollout spec the planner cannot act on; planRollout turns it into condition InvalidSpec.

/** A spec value the planner cannot use (a bad percentage, an unsupported step, a missing canary strategy). */
export class InvalidSpecError extends Error {
  override readonly name = 'InvalidSpecError';
  readonly code = 'rollgate.rollout.invalid-spec';

  constructor(
    message: string,
    /** Where in the spec, e.g. `spec.strategy.canary.maxSurge`. */
    readonly field: string,
  ) {
    super(`${field}: ${message}`);
  }
}
