// The reconcile entry point the queue worker calls: read → plan → act, repeated while it makes progress.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import type { ObservedState, RolloutAction, RolloutPlan } from '../rollout/index.ts';
import { planRollout } from '../rollout/index.ts';
import type { Rollout } from '../spec/rollout.ts';
import type { TrafficRouter } from './traffic-router.ts';
import { ActionExecutor, type ExecutionReport } from './action-executor.ts';
import { AnalysisRunBuildError, type AnalysisRunFactory } from './analysis-run-factory.ts';
import { DEFAULT_CONFLICT_BACKOFF, DEFAULT_TRANSIENT_BACKOFF, backoffDelayMs } from './backoff.ts';
import type { KubeClients } from './client.ts';
import { KubeThrottledError, dispositionOf } from './errors.ts';
import { EventRecorder } from './event-recorder.ts';
import { InvalidRolloutObjectError, ObservedStateReader, type RolloutKey } from './observed-state-reader.ts';
import { UnsafeActionError } from './unsafe-action-error.ts';

/** Counters of one reconcile call: for logs, metrics and the write-budget bench. */
export interface ReconcileStats {
  passes: number;
  /** API writes sent (creates, patches, deletes, status, events). */
  writes: number;
  /** Passes stopped by a 409 (re-read and re-planned). */
  conflicts: number;
  /** Passes stopped by a 5xx, 429 or network error. */
  transientErrors: number;
}

/**
 * What the queue should do next with this rollout.
 * - `done`: nothing pending; only a change in the cluster (or Git) can give it work.
 * - `requeue`: look again after `afterMs` (a timer, a resync while pods come up, or backoff after errors).
 * - `stalled`: a human must act (invalid object, forbidden, refused write); do not retry.
 */
export type ReconcileOutcome =
  | { kind: 'done'; stats?: ReconcileStats }
  | { kind: 'requeue'; afterMs: number; reason: string; stats?: ReconcileStats }
  | { kind: 'stalled'; reason: string; stats?: ReconcileStats };

/** The pure planner's signature (injectable for tests). */
export type RolloutPlanner = (rollout: Rollout, observed: ObservedState, now: Date) => RolloutPlan;

/** Where the last traffic-router error per rollout is kept between calls (a Map is enough per process). */
export type TrafficErrorMemory = Map<string, { message: string; failures: number }>;

export interface ReconcileDeps {
  clients: KubeClients;
  clock: Clock;
  logger: Logger;
  /** A traffic router; none by default (replica ratio: the planner's scale and selector writes are the split). */
  router?: TrafficRouter;
  /** Read → plan → act passes per call before handing back to the queue (default 10). */
  maxPasses?: number;
  /** Conflict / transient retries inside one call before returning a backoff requeue (default 5). */
  maxRetries?: number;
  /** How long to wait while pods come up and no timer is pending (default 5 s). */
  resyncMs?: number;
  /** Waits between retries; tests with a ManualClock pass a function that returns at once. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  events?: EventRecorder;
  planner?: RolloutPlanner;
  analysisRuns?: AnalysisRunFactory;
  trafficErrors?: TrafficErrorMemory;
  /** Called after every pass with what was read and done: tests check invariants here. */
  onPass?: (pass: {
    observed: ObservedState;
    plan: RolloutPlan;
    report: ExecutionReport;
  }) => void | Promise<void>;
}

export const DEFAULT_MAX_PASSES = 10;
export const DEFAULT_MAX_RETRIES = 5;
export const DEFAULT_RESYNC_MS = 5_000;
/** Requeue delay when a call used all its passes and was still writing. */
export const PASS_BUDGET_REQUEUE_MS = 1_000;

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True when every ReplicaSet has what it asked for, so no pod change is pending. */
function replicaSetsSettled(observed: ObservedState): boolean {
  return observed.replicaSets.every(
    (rs) => rs.status.replicas === rs.replicas && rs.status.availableReplicas === rs.replicas,
  );
}

function keyOf(key: RolloutKey): string {
  return `${key.namespace}/${key.name}`;
}

/**
 * Reconciles one rollout. Each pass reads fresh state, plans with the pure planner and executes the
 * plan; passes repeat while they write something (bounded by `maxPasses`). A 409 or a transient error
 * stops the pass, and the next pass re-reads and re-plans after a jittered exponential backoff; after
 * `maxRetries` the call returns a requeue instead of giving up. The outcome is never a silent drop:
 * anything still in motion comes back as `requeue`.
 */
export async function reconcileRollout(key: RolloutKey, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  const logger = deps.logger.child({ rollout: keyOf(key) });
  const maxPasses = deps.maxPasses ?? DEFAULT_MAX_PASSES;
  const maxRetries = deps.maxRetries ?? DEFAULT_MAX_RETRIES;
  const resyncMs = deps.resyncMs ?? DEFAULT_RESYNC_MS;
  const sleep = deps.sleep ?? realSleep;
  const random = deps.random ?? Math.random;
  const planner = deps.planner ?? planRollout;
  const trafficErrors: TrafficErrorMemory = deps.trafficErrors ?? new Map();
  const reader = new ObservedStateReader(deps.clients);
  const executor = new ActionExecutor({
    clients: deps.clients,
    logger,
    events: deps.events ?? new EventRecorder(deps.clients.core, deps.clock, logger),
    router: deps.router,
    analysisRuns: deps.analysisRuns,
  });
  const stats: ReconcileStats = { passes: 0, writes: 0, conflicts: 0, transientErrors: 0 };
  let retries = 0;

  const backoff = (err: unknown): number => {
    const policy = dispositionOf(err) === 'conflict' ? DEFAULT_CONFLICT_BACKOFF : DEFAULT_TRANSIENT_BACKOFF;
    const delay = backoffDelayMs(retries, { ...policy, random });
    return err instanceof KubeThrottledError && err.retryAfterMs !== undefined
      ? Math.max(delay, err.retryAfterMs)
      : delay;
  };

  /** Handles a failed read or pass: returns an outcome to hand back, or undefined to try again now. */
  const onFailure = async (err: unknown, where: string): Promise<ReconcileOutcome | undefined> => {
    const disposition =
      err instanceof InvalidRolloutObjectError ||
      err instanceof UnsafeActionError ||
      err instanceof AnalysisRunBuildError
        ? 'stalled'
        : dispositionOf(err);
    if (disposition === 'stalled') {
      logger.error({ err, where }, 'reconcile stalled: a human must act');
      return {
        kind: 'stalled',
        reason: `${where}: ${err instanceof Error ? err.message : String(err)}`,
        stats,
      };
    }
    if (disposition === 'conflict' || disposition === 'notFound') stats.conflicts += 1;
    else stats.transientErrors += 1;
    const delay = backoff(err);
    retries += 1;
    logger.debug({ err, where, retries, delay }, 'pass stopped; re-reading and re-planning');
    if (retries > maxRetries) {
      return {
        kind: 'requeue',
        afterMs: delay,
        reason: `${where}: ${err instanceof Error ? err.message : String(err)}`,
        stats,
      };
    }
    await sleep(delay);
    return undefined;
  };

  while (stats.passes < maxPasses) {
    stats.passes += 1;
    let read;
    try {
      read = await reader.read(key);
    } catch (err) {
      const outcome = await onFailure(err, 'read');
      if (outcome) return outcome;
      continue;
    }
    if (read === undefined) return { kind: 'done', stats };

    const lastTrafficError = trafficErrors.get(keyOf(key));
    if (lastTrafficError !== undefined) read.observed.traffic = { error: lastTrafficError.message };
    const now = deps.clock.now();
    let plan: RolloutPlan;
    try {
      plan = planner(read.observed.rollout, read.observed, now);
    } catch (err) {
      // The planner is total by contract; if it throws anyway that is a bug a human must see.
      logger.error({ err }, 'planner failed');
      return {
        kind: 'stalled',
        reason: `planner failed: ${err instanceof Error ? err.message : String(err)}`,
        stats,
      };
    }
    const report = await executor.execute(plan, read);
    stats.writes += report.writes;
    if (report.trafficError !== undefined)
      trafficErrors.set(keyOf(key), {
        message: report.trafficError,
        failures: (trafficErrors.get(keyOf(key))?.failures ?? 0) + 1,
      });
    else if (plan.actions.some((action: RolloutAction) => action.kind === 'setTrafficWeights'))
      trafficErrors.delete(keyOf(key));
    if (deps.onPass) await deps.onPass({ observed: read.observed, plan, report });

    if (report.stoppedBy !== undefined) {
      const outcome = await onFailure(report.stoppedBy, 'write');
      if (outcome) return outcome;
      continue;
    }
    logger.debug(
      { writes: report.writes, outcomes: report.outcomes, requeueAfterMs: plan.requeueAfterMs },
      'pass done',
    );
    // Something changed, or the planner asked to look again at once: the next pass observes the result.
    if (report.stateWrites > 0 || plan.requeueAfterMs === 0) continue;
    if (report.trafficError !== undefined) {
      // Retry the router with a backoff that grows across calls, but never past a planner timer
      // (the progress deadline must still fire on time).
      const failures = trafficErrors.get(keyOf(key))?.failures ?? 1;
      const retryMs = backoffDelayMs(failures - 1, { ...DEFAULT_TRANSIENT_BACKOFF, maxMs: resyncMs, random });
      return {
        kind: 'requeue',
        afterMs: plan.requeueAfterMs !== undefined ? Math.min(retryMs, plan.requeueAfterMs) : retryMs,
        reason: `traffic router failed: ${report.trafficError}`,
        stats,
      };
    }
    const timerMs = plan.requeueAfterMs;
    if (timerMs !== undefined) {
      const afterMs = replicaSetsSettled(read.observed) ? timerMs : Math.min(timerMs, resyncMs);
      return { kind: 'requeue', afterMs, reason: 'timer', stats };
    }
    if (!replicaSetsSettled(read.observed))
      return { kind: 'requeue', afterMs: resyncMs, reason: 'waiting for pods', stats };
    return { kind: 'done', stats };
  }
  // Still writing after maxPasses: come back soon, but not at once, so a plan that never settles
  // (a bug) costs one reconcile per second instead of a hot loop.
  return {
    kind: 'requeue',
    afterMs: Math.min(PASS_BUDGET_REQUEUE_MS, resyncMs),
    reason: 'pass budget used while still making progress',
    stats,
  };
}
