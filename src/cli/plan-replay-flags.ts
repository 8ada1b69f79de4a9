// `rollgate plan --analysis --replay`'s flags, default and flag error: light, so the command loads nothing else before it runs.
import type { KubeFlags } from './kube-flags.ts';

/** The flags of a replay, as Commander parses them. */
export interface ReplayFlags extends KubeFlags {
  analysis: string;
  /** How many past runs (default 10). */
  runs?: string;
  /** Replay the runs of this template name instead of the file's. */
  runsOf?: string;
  /** With --to/--step: a Prometheus range instead of past runs. */
  from?: string;
  to?: string;
  step?: string;
  argument?: string[];
  output: 'text' | 'json';
}

/** A flag value a replay cannot use: the command turns it into a usage error (exit 2). */
export class ReplayFlagError extends Error {
  override readonly name = 'ReplayFlagError';
  readonly code = 'plan.replay_flag';
}

export const DEFAULT_REPLAY_RUNS = 10;
