// The remote could not be reached or answered with a server error (network, DNS, 5xx): try again later.
import { GitSourceError } from './git-source-error.ts';

/** The remote could not be reached or answered with a server error (network, DNS, 5xx): try again later. */
export class GitUnreachableError extends GitSourceError {
  override readonly name = 'GitUnreachableError';
  readonly code = 'git.unreachable';
}
