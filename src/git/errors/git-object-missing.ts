// A commit or tree the diff needs is not in the local cache (fetch first).
import { GitSourceError } from './git-source-error.ts';

/** A commit or tree the diff needs is not in the local cache (fetch first). */
export class GitObjectMissingError extends GitSourceError {
  override readonly name = 'GitObjectMissingError';
  readonly code = 'git.object-missing';
}
