// The context every Git source error carries: which source, which remote (no credentials), which step.

/** The step of a source's work an error happened in (`commit` and `push`: writing a promotion branch). */
export type GitStep = 'ref-check' | 'fetch' | 'diff' | 'commit' | 'push';

/** What a Git source error names; `url` never contains credentials. */
export interface GitErrorContext {
  source: string;
  url: string;
  step: GitStep;
  /** HTTP status, when the server answered. */
  status?: number;
}
