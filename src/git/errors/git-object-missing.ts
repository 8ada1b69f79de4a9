// A commit or tree the diff needs is not in the local cache (fetch first).
import type { GitErrorContext } from './git-error-context.ts';

/** A commit or tree the diff needs is not in the local cache (fetch first). */
export class GitObjectMissingError extends Error {
  override readonly name = 'GitObjectMissingError';
  readonly code = 'git.object-missing';

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
