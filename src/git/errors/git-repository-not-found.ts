// The remote has no repository at the source's URL (404).
import { GitSourceError } from './git-source-error.ts';

/** The remote has no repository at the source's URL (404). */
export class GitRepositoryNotFoundError extends GitSourceError {
  override readonly name = 'GitRepositoryNotFoundError';
  readonly code = 'git.repository-not-found';
}
