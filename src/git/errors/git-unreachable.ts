// The remote could not be reached or answered with a server error (network, DNS, 5xx): try again later.
import type { GitErrorContext } from './git-error-context.ts';

/** The remote could not be reached or answered with a server error (network, DNS, 5xx): try again later. */
export class GitUnreachableError extends Error {
  override readonly name = 'GitUnreachableError';
  readonly code = 'git.unreachable';

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
