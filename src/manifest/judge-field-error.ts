// The error for a `judge` metric field that does not read (a tolerance that is no number, a confidence outside 0..1).

/** A `provider.judge` field with an unusable value; validate reports it at the field, a run as an Error measurement. */
export class JudgeFieldError extends Error {
  override readonly name = 'JudgeFieldError';
  readonly code = 'rollgate.analysis.judge-field';

  constructor(
    readonly field: 'tolerance' | 'confidence' | 'minSamples',
    readonly reason: string,
  ) {
    super(`judge.${field} ${reason}`);
  }
}
