// Backtesting a template over a time range: the range cut into windows, each a run replayed against a live provider at the replay clock.
import type { AnalysisTemplate, Argument, ClusterAnalysisTemplate } from '../../manifest/analysis.ts';
import { buildAnalysisRun } from '../build-analysis-run.ts';
import type { MetricProviderRegistry } from '../providers/metric-provider.ts';
import { replayAnalysisRun, type ReplayOutcome } from './replay-analysis-run.ts';
import { ReplayRangeError } from './replay-range-error.ts';

/** At most this many windows per replay: each is a run with its own queries. */
export const MAX_REPLAY_WINDOWS = 100;

/** One window of the range and what the template made of it. */
export interface RangeWindowReplay {
  start: string;
  end: string;
  replay?: Omit<ReplayOutcome, 'status'>;
  error?: string;
}

export interface RangeReplayOptions {
  from: Date;
  to: Date;
  /** The length of each window (one run each); default: the whole range is one window. */
  stepMs?: number;
  /** Providers that query at the replay clock (Prometheus with `queryAtNow`). */
  providers: MetricProviderRegistry;
  namespace: string;
}

/**
 * Cuts [from, to] into windows of `stepMs` and replays, in each, a run of `template` (arguments from
 * `args`) as if a rollout had started it at the window's start and ended it at the window's end: the
 * live planner decides when to measure, and each measurement queries the provider as of that moment
 * (an instant query's `time`, a rangeQuery's `now()`). A run that has not decided when its window
 * ends is terminated there.
 * @throws ReplayRangeError when `to` is not after `from`, the step is not positive, or the windows exceed {@link MAX_REPLAY_WINDOWS}.
 */
export async function replayRange(
  template: AnalysisTemplate | ClusterAnalysisTemplate,
  args: readonly Argument[],
  options: RangeReplayOptions,
): Promise<RangeWindowReplay[]> {
  const fromMs = options.from.getTime();
  const toMs = options.to.getTime();
  if (!(toMs > fromMs)) throw new ReplayRangeError('--to must be after --from');
  const stepMs = options.stepMs ?? toMs - fromMs;
  if (!(stepMs > 0)) throw new ReplayRangeError('--step must be more than 0');
  const windows = Math.ceil((toMs - fromMs) / stepMs);
  if (windows > MAX_REPLAY_WINDOWS)
    throw new ReplayRangeError(
      `--from/--to/--step make ${windows} windows, at most ${MAX_REPLAY_WINDOWS}: use a longer step or a shorter range`,
    );
  const results: RangeWindowReplay[] = [];
  for (let i = 0; i < windows; i++) {
    const start = new Date(fromMs + i * stepMs);
    const end = new Date(Math.min(toMs, start.getTime() + stepMs));
    const window = { start: start.toISOString(), end: end.toISOString() };
    try {
      const run = buildAnalysisRun([template], args, {
        name: `${template.metadata.name}-replay-${i + 1}`,
        namespace: options.namespace,
      });
      const { status: _status, ...replay } = await replayAnalysisRun(run, {
        source: { providers: options.providers, exhausted: () => false, notes: [] },
        start,
        end,
      });
      results.push({ ...window, replay });
    } catch (error) {
      results.push({ ...window, error: (error as Error).message });
    }
  }
  return results;
}
