// Why a promotion's `files` could not be planned: a stable code and the key or path it concerns.

/** Stable codes of file-move failures (compare codes, not classes, across process boundaries). */
export type FileMoveErrorCode =
  /** A `from` or `to` path is empty, absolute, or climbs out of its source's path with `..`. */
  | 'promotion.path_outside_source'
  /** A move's `from` is a file in one tree and a folder in the other (or the target has the reverse). */
  | 'promotion.path_kind_mismatch'
  /** Two moves write the same target path. */
  | 'promotion.path_conflict'
  /** A file to move is not UTF-8 text (the branch writer writes text). */
  | 'promotion.binary_file';

/** Where: the configuration key (`promotions[0].files[1].from`) and the path as given. */
export interface FileMoveContext {
  key?: string;
  path?: string;
}

/**
 * A move that cannot be done without a human (the configuration or a tree must change). Never transient:
 * the same trees give the same answer.
 */
export class FileMoveError extends Error {
  override readonly name = 'FileMoveError';
  readonly transient = false;

  constructor(
    readonly code: FileMoveErrorCode,
    message: string,
    readonly context: FileMoveContext = {},
  ) {
    super(context.key === undefined ? message : `${context.key}: ${message}`);
  }
}
