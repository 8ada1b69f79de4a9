// The error raised when a `git` command the demo runs (init, commit, push) fails.

/** A git CLI call failed; carries the arguments and git's own stderr. */
export class DemoGitError extends Error {
  override readonly name = 'DemoGitError';
  readonly code = 'rollgate.demo.git';

  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed: ${stderr.trim() || 'no output'}`);
  }
}
