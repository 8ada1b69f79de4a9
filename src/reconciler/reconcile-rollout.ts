// The reconcile entry point the queue worker calls: read → plan → act, repeated at once while it makes progress.
import type { Clock } from '../clock/clock.ts';
import { nextLook, type NextLook } from '../clock/next-look.ts';
import type { Logger } from '../log/logger.ts';
import { LeaseLostError, type JobLease } from '../queue/job-lease.ts';
import type { ObservedState, RolloutPlan } from '../rollout/index.ts';
import { planRollout } from '../rollout/index.ts';
import type { DrivenApi } from '../manifest/driven-api.ts';
import type { Rollout } from '../manifest/rollout.ts';
import { ActionExecutor, type ExecutionReport, type HeldStatus } from './action-executor.ts';
import { AnalysisRunBuildError, type AnalysisRunFactory } from './analysis-run-factory.ts';
import { objectReadsOf, type KubeClients } from '../kube/client.ts';
import type { ClusterCache } from '../kube/cluster-cache.ts';
import { KubeThrottledError, dispositionOf, isNamespaceTerminating } from '../kube/errors.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import {
  InvalidRolloutObjectError,
  ObservedStateReader,
  type ObservedRead,
  type RolloutKey,
} from './observed-state-reader.ts';
import { ReadPolicy, type WrittenVersionsStore } from './read-policy.ts';
import { ReconcileRetryError, type ReconcileRetryStage } from './reconcile-retry-error.ts';
import type { ReconcileStats } from './reconcile-stats.ts';
import type { TrafficRouter, TrafficRouterFactory } from './traffic-router.ts';
import { UnsafeActionError } from './unsafe-action-error.ts';

// Re-exported where its importers have always found it; reconcile-retry-error imports it from its own file.
export type { ReconcileStats } from './reconcile-stats.ts';

/**
 * What the queue should do next with this rollout. A transient error is not an outcome: the call
 * throws {@link ReconcileRetryError} and the queue retries with its backoff.
 * - `done`: nothing pending; only a change in the cluster (or Git) can give it work.
 * - `requeue`: look again after `afterMs`, for `reason`: the planner's `requeueAfterMs` (its
 *   `requeueReason`: a timer, the progress deadline, pods…), or {@link PASS_BUDGET_REQUEUE_MS} after a
 *   call that used all its passes while still writing. Each is a candidate fed into `nextLook`
 *   (src/clock/next-look.ts), the one minimum.
 * - `stalled`: a human must act (invalid object, forbidden, refused write); do not retry.
 */
export type ReconcileOutcome =
  | { kind: 'done'; stats?: ReconcileStats }
  | { kind: 'requeue'; afterMs: number; reason: string; stats?: ReconcileStats }
  | { kind: 'stalled'; reason: string; stats?: ReconcileStats };

/**
 * What one pass changed, for notifications: the status read before it and the status it wrote (the same
 * when the write was not needed or failed), and the ReplicaSets it scaled.
 */
export interface RolloutTransition {
  /** The Rollout as read at the start of the pass (metadata, spec, status). */
  raw: Record<string, unknown>;
  before: unknown;
  after: unknown;
  scaled: Array<{ name: string; replicas: number }>;
}

/** The pure planner's signature (injectable for tests). */
export type RolloutPlanner = (rollout: Rollout, observed: ObservedState, now: Date) => RolloutPlan;

export interface ReconcileDeps {
  clients: KubeClients;
  /**
   * The API the rollout lives in (default rollgate.dev): what it is read and its status written through,
   * its runs created in, its ReplicaSets and Events name.
   */
  api?: DrivenApi;
  clock: Clock;
  logger: Logger;
  /**
   * The informers' cache (the reconciler process passes it): passes read from it as {@link ReadPolicy}
   * allows; none, every pass asks the API.
   */
  cache?: ClusterCache;
  /** Where a job's writes are handed to the rollout's next job in any process (Redis in the process). */
  writtenVersions?: WrittenVersionsStore;
  /** The job's read policy, when the caller shares one across calls (the analysis side and the rollout). */
  reads?: ReadPolicy;
  /** One traffic router for every rollout (tests); wins over `routers`. */
  router?: TrafficRouter;
  /**
   * The router of each rollout, from its spec's trafficRouting (the process wires the provider table
   * here); none by default, and none for a rollout without trafficRouting (replica ratio: the
   * planner's scale and selector writes are the split).
   */
  routers?: TrafficRouterFactory;
  /**
   * The queue job's lease (src/queue/job-lease.ts): confirmed before each router call. Lost, the call
   * ends (`done`): the worker that took the job over carries on from what is live.
   */
  lease?: JobLease;
  /** Read → plan → act passes per call before handing back to the queue (default 10). */
  maxPasses?: number;
  /** Conflicts re-read and re-planned at once in one call before it throws for the queue's backoff (default 5). */
  maxConflicts?: number;
  events?: EventRecorder;
  planner?: RolloutPlanner;
  analysisRuns?: AnalysisRunFactory;
  /**
   * Called after a pass that wrote the status or scaled a ReplicaSet. Not awaited, and must not throw:
   * it may only enqueue (notifications), so it never slows or stops a reconcile.
   */
  onTransition?: (transition: RolloutTransition) => void;
  /**
   * Called as each pass starts reading the rollout's state, once the cache holds what it waits for: the
   * process's RunningJob (running-jobs.ts), so the watch events before it need no job of their own.
   */
  onRead?: () => void;
  /** Called after every pass with what was read and done: tests check invariants here. */
  onPass?: (pass: {
    observed: ObservedState;
    plan: RolloutPlan;
    report: ExecutionReport;
  }) => void | Promise<void>;
}

export const DEFAULT_MAX_PASSES = 10;
export const DEFAULT_MAX_CONFLICTS = 5;
/**
 * Requeue delay when a call used all its passes and was still writing: soon, but not at once, so a plan
 * that never settles (a bug) costs one reconcile per second instead of a hot loop.
 */
export const PASS_BUDGET_REQUEUE_MS = 1_000;
/** The reason a requeue of {@link PASS_BUDGET_REQUEUE_MS} gives. */
export const PASS_BUDGET_REASON = 'pass budget used while still making progress';

/** The outcome for the decision: a requeue, or `done` when there is none. */
export function outcomeOf(look: NextLook | undefined, stats: ReconcileStats): ReconcileOutcome {
  return look === undefined
    ? { kind: 'done', stats }
    : { kind: 'requeue', afterMs: look.afterMs, reason: look.reason, stats };
}

/** Errors that a retry cannot fix: the rollout waits for a human. */
function isStalled(err: unknown): boolean {
  return (
    err instanceof InvalidRolloutObjectError ||
    err instanceof UnsafeActionError ||
    err instanceof AnalysisRunBuildError ||
    dispositionOf(err) === 'stalled'
  );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reconciles one rollout. Each pass reads the state (from the informer cache when there is one and
 * it holds the job's own writes, else from the API: {@link ReadPolicy}), plans with the pure planner and
 * executes the plan. Passes repeat at once while they changed what the next one observes or the planner asked for
 * `requeueAfterMs: 0`, at most `maxPasses`. The call never waits: when it is over, the outcome says when
 * to look again: the planner's `requeueAfterMs`, or the pass budget's delay.
 *
 * A 409 (or a 404 on a write) stops the pass and the next one re-reads and re-plans at once, at most
 * `maxConflicts` times; past that, and on any transient error (5xx, 408, 429, network), the call throws
 * {@link ReconcileRetryError} so the queue retries the job with its backoff (at least a 429's
 * Retry-After). An error a retry cannot fix returns `stalled`.
 */
export async function reconcileRollout(key: RolloutKey, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  const logger = deps.logger.child({ rollout: `${key.namespace}/${key.name}` });
  const maxPasses = deps.maxPasses ?? DEFAULT_MAX_PASSES;
  const maxConflicts = deps.maxConflicts ?? DEFAULT_MAX_CONFLICTS;
  const planner = deps.planner ?? planRollout;
  const reader = new ObservedStateReader(objectReadsOf(deps.clients), deps.cache, deps.api);
  const reads =
    deps.reads ?? (await ReadPolicy.forJob({ key, cache: deps.cache, shared: deps.writtenVersions, logger }));
  const executor = new ActionExecutor({
    clients: deps.clients,
    api: deps.api,
    logger,
    clock: deps.clock,
    events: deps.events ?? new EventRecorder(deps.clients.core, deps.clock, logger),
    router: deps.router,
    routers: deps.routers,
    analysisRuns: deps.analysisRuns,
  });
  const stats: ReconcileStats = { passes: 0, writes: 0, conflicts: 0, transientErrors: 0 };

  /** A failed read or pass: `stalled` to hand back, a throw for the queue, or undefined to re-plan now. */
  const onFailure = (err: unknown, stage: ReconcileRetryStage): ReconcileOutcome | undefined => {
    // The rollout's namespace is being deleted, the rollout with it: nothing to do, no human to call.
    if (isNamespaceTerminating(err)) {
      logger.info({ err: messageOf(err), stage }, 'namespace being deleted; leaving the rollout to it');
      return { kind: 'done', stats };
    }
    if (isStalled(err)) {
      logger.error({ err, stage }, 'reconcile stalled: a human must act');
      return { kind: 'stalled', reason: `${stage}: ${messageOf(err)}`, stats };
    }
    const disposition = dispositionOf(err);
    if (disposition === 'conflict' || disposition === 'notFound') {
      stats.conflicts += 1;
      if (stats.conflicts <= maxConflicts) {
        logger.debug({ err, stage, conflicts: stats.conflicts }, 'pass stopped; re-reading and re-planning');
        return undefined;
      }
    } else {
      stats.transientErrors += 1;
    }
    const retryAfterMs = err instanceof KubeThrottledError ? err.retryAfterMs : undefined;
    throw new ReconcileRetryError(stage, stats, retryAfterMs, { cause: err });
  };

  // The job's writes are handed to the rollout's next job once, as the call ends (whichever way it ends):
  // that job starts only after this one, so a save per pass only cost a Redis round trip each (3 % of the
  // reconciler's CPU at scale). A crash before the save loses the hint, which costs that job API reads.
  // A run that lost its lease saves nothing: the run that took the job over hands over its own writes.
  let leaseLost = false;
  try {
    return await runPasses();
  } finally {
    if (!leaseLost) await reads.publish();
  }

  async function runPasses(): Promise<ReconcileOutcome> {
    // A status a pass planned and held for the next pass of this job to write with its own (status written
    // once per job where the passes follow each other at once). Dropped when a pass fails: the re-plan
    // starts from the live status, as a job after a crash between the writes would.
    let held: HeldStatus | undefined;
    // What the passes that held their status scaled: handed to onTransition with the pass that writes it.
    let heldScaled: RolloutTransition['scaled'] = [];
    while (stats.passes < maxPasses) {
      stats.passes += 1;
      let read;
      try {
        // The cache once it holds this job's writes (read-your-writes), else the API: see ReadPolicy.
        const passReads = await reads.beginPass();
        // Every event applied from here on may be missing from this read: the job's end enqueues for them.
        deps.onRead?.();
        read = await reader.read(key, { reads: passReads });
      } catch (err) {
        held = undefined;
        reads.readApiNext();
        const outcome = onFailure(err, 'read');
        if (outcome) return outcome;
        continue;
      }
      if (read === undefined) return { kind: 'done', stats };

      // The planner sees the held status as the rollout's: it is what this job has decided so far.
      const observed =
        held === undefined
          ? read.observed
          : {
              ...read.observed,
              rollout: { ...read.observed.rollout, status: held.status as Rollout['status'] },
            };
      let plan: RolloutPlan;
      try {
        plan = planner(observed.rollout, observed, deps.clock.now());
      } catch (err) {
        // The planner is total by contract; if it throws anyway that is a bug a human must see.
        logger.error({ err }, 'planner failed');
        return { kind: 'stalled', reason: `planner failed: ${messageOf(err)}`, stats };
      }
      const report = await executor.execute(plan, read, {
        // Only when another pass of this job follows for sure: the last pass of the budget writes.
        mayHoldStatus: stats.passes < maxPasses,
        ...(held !== undefined && { heldEvents: held.events }),
        ...(deps.lease !== undefined && { lease: deps.lease }),
      });
      stats.writes += report.writes;
      reads.wrote(report.written);
      if (deps.onPass) await deps.onPass({ observed, plan, report });
      held = report.stoppedBy === undefined ? report.held : undefined;
      if (deps.onTransition) {
        // A held status is reported with the pass that writes it (its scales with it).
        if (held !== undefined) heldScaled = [...heldScaled, ...scaledIn(read, plan, report)];
        else {
          reportTransition(deps.onTransition, read, plan, report, logger, heldScaled);
          heldScaled = [];
        }
      }

      if (report.stoppedBy instanceof LeaseLostError) {
        leaseLost = true;
        // Not an error of the rollout: this run is stale, another worker's run of the job is the live one.
        logger.warn(
          { err: report.stoppedBy },
          'job lock lost; leaving the rollout to the run that took it over',
        );
        return { kind: 'done', stats };
      }
      if (report.stoppedBy !== undefined) {
        // The cache (or the read) was behind something we hold no version of: the re-plan asks the API.
        reads.readApiNext();
        const outcome = onFailure(report.stoppedBy, 'write');
        if (outcome) return outcome;
        continue;
      }
      logger.debug(
        { writes: report.writes, outcomes: report.outcomes, requeueAfterMs: plan.requeueAfterMs },
        'pass done',
      );
      // Something changed, or the planner asked to look again at once: the next pass observes the result.
      if (report.stateWrites > 0) continue;
      if (plan.requeueAfterMs === 0) {
        // Nothing written for the cache to show: what the planner wants to see again is in the API.
        reads.readApiNext();
        continue;
      }
      // The planner's decision, with its reason (a planner injected by a test may give none: a timer).
      return outcomeOf(
        nextLook([
          plan.requeueAfterMs === undefined
            ? undefined
            : { afterMs: plan.requeueAfterMs, reason: plan.requeueReason ?? 'timer' },
        ]),
        stats,
      );
    }
    // Still writing after maxPasses: the pass budget is the only candidate (see PASS_BUDGET_REQUEUE_MS).
    return outcomeOf(nextLook([{ afterMs: PASS_BUDGET_REQUEUE_MS, reason: PASS_BUDGET_REASON }]), stats);
  }
}

/**
 * Hands what the pass changed to `onTransition`; the outcomes follow the actions in order. A scale counts
 * only when the replica count moved (a scaleReplicaSet that only sets an annotation is not one).
 */
function reportTransition(
  onTransition: (transition: RolloutTransition) => void,
  read: ObservedRead,
  plan: RolloutPlan,
  report: ExecutionReport,
  logger: Logger,
  scaledBefore: RolloutTransition['scaled'] = [],
): void {
  const scaled = [...scaledBefore, ...scaledIn(read, plan, report)];
  if (!report.statusWritten && scaled.length === 0) return;
  const raw = read.raw;
  try {
    onTransition({ raw, before: raw.status, after: report.statusWritten ? plan.status : raw.status, scaled });
  } catch (err) {
    logger.warn({ err }, 'could not hand the pass to notifications');
  }
}

/** The ReplicaSets a pass scaled (the replica count moved). */
function scaledIn(
  read: ObservedRead,
  plan: RolloutPlan,
  report: ExecutionReport,
): RolloutTransition['scaled'] {
  const replicasBefore = new Map(read.observed.replicaSets.map((rs) => [rs.name, rs.replicas]));
  return plan.actions.flatMap((action, i) => {
    const result = report.outcomes[i]?.result;
    return action.kind === 'scaleReplicaSet' &&
      result !== undefined &&
      result !== 'unchanged' &&
      result !== 'failed' &&
      replicasBefore.get(action.name) !== action.replicas
      ? [{ name: action.name, replicas: action.replicas }]
      : [];
  });
}
