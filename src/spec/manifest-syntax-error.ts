// The error for a YAML document that cannot be read, with the file, line and column of the fault.

/** A YAML document is not valid YAML (bad indentation, duplicate key, unclosed bracket, …). */
export class ManifestSyntaxError extends Error {
  override readonly name = 'ManifestSyntaxError';
  readonly code = 'rollgate.spec.yaml-syntax';

  constructor(
    readonly file: string,
    readonly line: number,
    readonly col: number,
    /** 0-based index of the document within the file. */
    readonly documentIndex: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}:${col}: invalid YAML: ${reason}`);
  }
}
