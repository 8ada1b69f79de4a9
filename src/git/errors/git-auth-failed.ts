// The remote refused the credentials (401/403) or asked for credentials the source does not have.
import { GitSourceError } from './git-source-error.ts';

/** The remote refused the credentials (401/403) or asked for credentials the source does not have. */
export class GitAuthFailedError extends GitSourceError {
  override readonly name = 'GitAuthFailedError';
  readonly code = 'git.auth-failed';
}
