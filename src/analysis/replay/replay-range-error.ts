// The error for a replay range that cannot be walked (end before start, a step of 0, too many windows).

/** `--from/--to/--step` that make no replay: the CLI reports it as a usage error. */
export class ReplayRangeError extends Error {
  override readonly name = 'ReplayRangeError';
  readonly code = 'rollgate.analysis.replay-range';
}
