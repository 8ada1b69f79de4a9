// What the errors for an unreadable YAML document share: where the document is, why, and how it is reported.

/** How an unreadable document is reported: `invalid YAML` (its syntax) or `refused` (a resource bound). */
export type ManifestDocumentVerdict = 'invalid YAML' | 'refused';

/**
 * The base of one kind of unreadable-document error: its `name`, stable `code` and verdict, with the
 * position and reason every kind carries. Each kind subclasses it, keeping its own class for
 * `instanceof` and its own `code`.
 */
export function manifestDocumentError<const Code extends string>(
  name: string,
  code: Code,
  verdict: ManifestDocumentVerdict,
) {
  abstract class ManifestDocumentError extends Error {
    override readonly name: string = name;
    readonly code: Code = code;
    readonly verdict: ManifestDocumentVerdict = verdict;

    constructor(
      readonly file: string,
      readonly line: number,
      readonly col: number,
      /** 0-based index of the document within the file. */
      readonly documentIndex: number,
      readonly reason: string,
    ) {
      super(`${file}:${line}:${col}: ${verdict}: ${reason}`);
    }
  }
  return ManifestDocumentError;
}
