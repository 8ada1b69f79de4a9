// The source's branch does not exist on the remote.
import type { GitErrorContext } from './git-error-context.ts';

/** The source's branch does not exist on the remote. */
export class GitRefNotFoundError extends Error {
  override readonly name = 'GitRefNotFoundError';
  readonly code = 'git.ref-not-found';

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
