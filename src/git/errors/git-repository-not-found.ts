// The remote has no repository at the source's URL (404).
import type { GitErrorContext } from './git-error-context.ts';

/** The remote has no repository at the source's URL (404). */
export class GitRepositoryNotFoundError extends Error {
  override readonly name = 'GitRepositoryNotFoundError';
  readonly code = 'git.repository-not-found';

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
