// The remote answered something that is not valid Git smart HTTP, or the Git operation failed otherwise.
import type { GitErrorContext } from './git-error-context.ts';

/** The remote answered something that is not valid Git smart HTTP, or the Git operation failed otherwise. */
export class GitProtocolError extends Error {
  override readonly name = 'GitProtocolError';
  readonly code = 'git.protocol';

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
