// The remote answered something that is not valid Git smart HTTP, or the Git operation failed otherwise.
import { GitSourceError } from './git-source-error.ts';

/** The remote answered something that is not valid Git smart HTTP, or the Git operation failed otherwise. */
export class GitProtocolError extends GitSourceError {
  override readonly name = 'GitProtocolError';
  readonly code = 'git.protocol';
}
