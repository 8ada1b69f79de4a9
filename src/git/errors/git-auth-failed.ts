// The remote refused the credentials (401/403) or asked for credentials the source does not have.
import type { GitErrorContext } from './git-error-context.ts';

/** The remote refused the credentials (401/403) or asked for credentials the source does not have. */
export class GitAuthFailedError extends Error {
  override readonly name = 'GitAuthFailedError';
  readonly code = 'git.auth-failed';

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
