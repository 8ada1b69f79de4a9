// Replays an AnalysisRun through the live planner and executor, fed by a replay source, on an injected clock.
import type { AnalysisPhase, AnalysisRun, AnalysisRunStatus, Measurement } from '../../manifest/analysis.ts';
import { isCompletedPhase, isWorsePhase } from '../analysis-phase.ts';
import type { SecretResolver } from '../build-analysis-run.ts';
import { planAnalysisRun } from '../plan-analysis-run.ts';
import { reconcileAnalysisRun } from '../run-executor.ts';
import { RECORDED_AT, RECORDED_INDEX } from './recorded-measurements.ts';
import type { ReplaySource } from './replay-source.ts';

/** The measurement a replayed run ended on (or its worst metric's last one). */
export interface DecidingMeasurement {
  metric: string;
  /** 1-based, counting every measurement the metric took (Errors included), as the past run numbered them. */
  index: number;
  /** When it was taken: the recorded measurement's time, or the replay clock's. */
  time: string;
  phase: AnalysisPhase;
  value?: string;
  message?: string;
}

/** How a replayed run ended. */
export interface ReplayOutcome {
  /** Successful, Failed, Error or Inconclusive; Running only when the pass limit cut the replay short. */
  phase: AnalysisPhase;
  message?: string;
  /** The replay clock when the run ended. */
  endedAt: string;
  /** True when the source ran out before the run decided, and the run was terminated there. */
  terminated: boolean;
  deciding?: DecidingMeasurement;
  /** The replayed run's status, as the live executor wrote it. */
  status: AnalysisRunStatus;
  notes: readonly string[];
}

export interface ReplayOptions {
  source: ReplaySource;
  /** The replay clock's start: the past run's start, or the range's. */
  start: Date;
  /** Past this, the run is terminated (the past run ended, the range ends); none: only the source's exhaustion. */
  end?: Date;
  /** Reads secret arguments; without it a metric that needs one is an Error measurement (as in a live run without one). */
  resolveSecret?: SecretResolver;
  /** Bound on reconcile passes (default 10 000), so no template can make a replay loop for ever. */
  maxPasses?: number;
}

const DEFAULT_MAX_PASSES = 10_000;

function decidingMeasurement(status: AnalysisRunStatus): DecidingMeasurement | undefined {
  let worst: { name: string; phase: AnalysisPhase; measurements: Measurement[]; taken: number } | undefined;
  for (const result of status.metricResults ?? []) {
    if (result.dryRun === true) continue;
    const measurements = (result.measurements ?? []).filter((m) => m.finishedAt !== undefined);
    if (measurements.length === 0) continue;
    if (worst === undefined || isWorsePhase(worst.phase, result.phase))
      worst = {
        name: result.name,
        phase: result.phase,
        measurements,
        taken: (result.count ?? 0) + (result.error ?? 0),
      };
  }
  const last = worst?.measurements.at(-1);
  if (worst === undefined || last === undefined) return undefined;
  const recordedIndex = last.metadata?.[RECORDED_INDEX];
  const recordedAt = last.metadata?.[RECORDED_AT];
  return {
    metric: worst.name,
    index: recordedIndex !== undefined ? Number(recordedIndex) : worst.taken,
    time: recordedAt !== undefined && recordedAt !== '' ? recordedAt : (last.finishedAt ?? ''),
    phase: last.phase,
    ...(last.value !== undefined && { value: last.value }),
    ...(last.message !== undefined && { message: last.message }),
  };
}

/**
 * Replays `run` (a fresh run built from the template under test) exactly as the reconciler would run
 * it: each pass is `reconcileAnalysisRun` — the live planner, executor, condition evaluation and
 * counting — at the replay clock, which then moves to the planner's next wake-up (no sleeping). When a
 * metric falls due that the source has no more answers for, or the clock passes `end`, the run is
 * terminated there (`spec.terminate`, as a rollout that completed would), so it ends Successful unless
 * something already failed. Returns the final phase and the measurement it was decided on.
 */
export async function replayAnalysisRun(run: AnalysisRun, options: ReplayOptions): Promise<ReplayOutcome> {
  const { source } = options;
  const maxPasses = options.maxPasses ?? DEFAULT_MAX_PASSES;
  const endMs = options.end?.getTime();
  let current: AnalysisRun = { ...run, spec: { ...run.spec }, status: {} };
  delete current.status;
  let now = options.start;
  let terminated = false;
  for (let pass = 0; pass < maxPasses; pass++) {
    const plan = planAnalysisRun(current, now);
    const ranOut =
      (endMs !== undefined && now.getTime() > endMs) ||
      plan.measure.some((name) => source.exhausted(name, now));
    if (ranOut && current.spec.terminate !== true) {
      current = { ...current, spec: { ...current.spec, terminate: true } };
      terminated = true;
    }
    const outcome = await reconcileAnalysisRun(current, {
      providers: source.providers,
      now,
      ...(options.resolveSecret !== undefined && { resolveSecret: options.resolveSecret }),
    });
    current = { ...current, status: outcome.status };
    if (isCompletedPhase(outcome.status.phase)) break;
    if (outcome.requeueAfterMs === undefined) {
      // Nothing will ever fall due (a metric with neither count nor interval left): the run would wait for
      // its rollout to end it; end it now.
      if (current.spec.terminate === true) break;
      current = { ...current, spec: { ...current.spec, terminate: true } };
      terminated = true;
      continue;
    }
    now = new Date(now.getTime() + outcome.requeueAfterMs);
  }
  const status = current.status ?? {};
  const deciding = decidingMeasurement(status);
  return {
    phase: status.phase ?? 'Pending',
    ...(status.message !== undefined && { message: status.message }),
    endedAt: now.toISOString(),
    terminated,
    ...(deciding !== undefined && { deciding }),
    status,
    notes: source.notes,
  };
}
