// Why `rollgate approve` wrote nothing: a stable code, and a message that says what to do instead.

/** Stable codes of approval failures (compare codes, not classes, across process boundaries). */
export type ApprovalErrorCode =
  /** No Rollout of that name in that namespace. */
  | 'approval.rollout_not_found'
  /** The Rollout is not waiting at an indefinite pause (another step, a timed pause, done, aborted). */
  | 'approval.not_at_gate'
  /** The Rollout was not synced from Git, or from a source the configuration does not have. */
  | 'approval.source_unknown'
  /** The Rollout's file is not at the source branch's tip. */
  | 'approval.file_not_found'
  /** `--pr` and no promotion gives the source's pull request settings. */
  | 'approval.no_promotion';

/** A call that cannot write the approval as asked; nothing was written. Never transient. */
export class ApprovalError extends Error {
  override readonly name = 'ApprovalError';
  readonly transient = false;

  constructor(
    readonly code: ApprovalErrorCode,
    message: string,
  ) {
    super(message);
  }
}
