// The error for an analysis argument that has no value when a run is built or a metric is resolved.

/** An argument (declared by a template or referenced as `{{args.NAME}}`) ended up without a value. */
export class MissingArgumentError extends Error {
  override readonly name = 'MissingArgumentError';
  readonly code = 'rollgate.analysis.missing-argument';

  constructor(
    /** The argument's name. */
    readonly argument: string,
    /** The templates involved, for the message. */
    readonly templates: readonly string[],
    readonly reason = 'has no value (give it a value or valueFrom in the rollout, or a default in the template)',
  ) {
    super(
      `analysis argument "${argument}" ${reason}${templates.length > 0 ? ` (templates: ${templates.join(', ')})` : ''}`,
    );
  }
}
