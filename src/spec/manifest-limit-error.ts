// The error for YAML refused because reading it would cost too much (alias bombs, oversized files).

/** A YAML input exceeds a resource bound: too many alias expansions, or too many bytes. */
export class ManifestLimitError extends Error {
  override readonly name = 'ManifestLimitError';
  readonly code = 'rollgate.spec.yaml-limit';

  constructor(
    readonly file: string,
    readonly line: number,
    readonly col: number,
    readonly documentIndex: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}:${col}: refused: ${reason}`);
  }
}
