// The error for analysis templates whose nested `templates` lead back to themselves.

/** Nested templates form a cycle: no run can be built from them (a human must break it). */
export class TemplateCycleError extends Error {
  override readonly name = 'TemplateCycleError';
  readonly code = 'rollgate.analysis.template-cycle';

  /** `chain`: the templates as `Kind/name`, from the first one of the cycle back to it. */
  constructor(readonly chain: readonly string[]) {
    super(`analysis templates reference each other in a cycle: ${chain.join(' → ')}`);
  }
}
