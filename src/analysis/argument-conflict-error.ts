// The error for an analysis argument given two different default values by two merged templates.

/** Two templates of one run declare the same argument with different values. */
export class ArgumentConflictError extends Error {
  override readonly name = 'ArgumentConflictError';
  readonly code = 'rollgate.analysis.argument-conflict';

  constructor(
    readonly argument: string,
    readonly values: readonly [string, string],
    readonly templates: readonly string[],
  ) {
    super(
      `analysis argument "${argument}" is declared with different values ${JSON.stringify(values[0])} and ${JSON.stringify(values[1])} (templates: ${templates.join(', ')})`,
    );
  }
}
