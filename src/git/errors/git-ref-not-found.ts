// The source's branch does not exist on the remote.
import { GitSourceError } from './git-source-error.ts';

/** The source's branch does not exist on the remote. */
export class GitRefNotFoundError extends GitSourceError {
  override readonly name = 'GitRefNotFoundError';
  readonly code = 'git.ref-not-found';
}
