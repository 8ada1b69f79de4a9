// The remote refused to update the branch (a hook, branch protection, a ref that moved under the push).
import { GitSourceError } from './git-source-error.ts';

/** The remote refused to update the branch (a hook, branch protection, a ref that moved under the push). */
export class GitPushRejectedError extends GitSourceError {
  override readonly name = 'GitPushRejectedError';
  readonly code = 'git.push-rejected';
}
