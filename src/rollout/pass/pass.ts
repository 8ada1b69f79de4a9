// One planning pass as data: what the sub-steps read (context, revision) and what they decided so far.
import type { PauseCondition } from '../../manifest/rollout.ts';
import type { ObservedReplicaSet } from '../observed-state.ts';
import type { Revision } from '../plan-revision.ts';
import {
  classifyOldReplicaSets,
  withScaleDownRevisionLimit,
  type OldReplicaSet,
} from '../plan-scale-down.ts';
import type { DesiredTraffic } from '../plan-traffic.ts';
import type { RolloutPhase } from '../../manifest/rollout.ts';
import type { EmitEventAction, RolloutAction, ScaleReplicaSetAction } from '../rollout-action.ts';
import type { RolloutContext } from '../rollout-context.ts';
import { readManagedRoutes } from '../plan-managed-routes.ts';
import { withinRollbackWindow } from '../rollback-window.ts';
import type { ManagedRouteRecord, PlannedRolloutStatus, ProgressWindow } from '../rollout-plan.ts';

/** The rollout's own bookkeeping, carried from one pass to the next through status. */
export interface PassState {
  stepIndex: number;
  pauseConditions: readonly PauseCondition[];
  controllerPause: boolean;
  abort: boolean;
  abortedAt?: string | undefined;
  promoteFull: boolean;
  /**
   * A rollback within spec.rollbackWindow: `promoteFull` is set for it (steps, pauses and analysis are
   * skipped) but not written to status, as Argo does not; recomputed from the ReplicaSets on every pass.
   */
  rollbackWindow?: boolean;
  progress?: ProgressWindow | undefined;
  supersededPodHash?: string | undefined;
  /** Header and mirror routes set and not yet seen removed (status.managedRoutes). */
  managedRoutes: readonly ManagedRouteRecord[];
}

/** Why an abort was decided; the progress deadline has its own condition reason and event (as Argo). */
export type AbortReason = 'ProgressDeadlineExceeded' | 'AnalysisRunFailed' | 'ExperimentFailed';

/** What the sub-steps found out on the way, for the ones after them. */
export interface Findings {
  /** Set when this pass decides to abort; the message names the cause. */
  abortCause?: string | undefined;
  abortReason?: AbortReason | undefined;
  deadlineExceeded: boolean;
  /** When the progress deadline expires if nothing changes (the last deadline sub-step's answer). */
  deadlineWakeAtMs?: number | undefined;
  /** What the canary waits for (an AnalysisRun), for the status message. */
  waitingFor: string;
  /** AnalysisRuns this pass wants kept; every other unfinished run is stopped. */
  wantedRuns: readonly string[];
  /** The pass sent the router what it wants (or nothing needed sending): status records those weights. */
  trafficSent?: boolean | undefined;
}

/** How a pass ends: the phase and message it reports and the weights it records. */
export interface Verdict {
  phase: RolloutPhase;
  message: string;
  aborted: boolean;
  /** The abort (or Degraded state) came from the progress deadline: condition reason ProgressDeadlineExceeded. */
  deadlineExceeded: boolean;
  paused: boolean;
  completed: boolean;
  /** The hash status.stableRS names after this pass. */
  stableHash: string;
  /**
   * The traffic status.canary.weights records: what the router was told this pass, `keep`, or `forget`
   * (unknown: the next pass sends the weights again before relying on them).
   */
  weights: DesiredTraffic | 'keep' | 'forget';
  /** The pass only recorded a phase (abort, retry): plan again at once, before acting. */
  immediate?: boolean;
  /** The status.blueGreen a blue-green pass records (absent: the live one is kept). */
  blueGreen?: Record<string, unknown>;
}

/** One pass. Sub-steps never modify it; each returns a new one ({@link amend}). */
export interface Pass {
  readonly context: RolloutContext;
  readonly revision: Revision;
  /** Old ReplicaSets (neither stable nor current) and their scale-down deadlines. */
  readonly old: readonly OldReplicaSet[];
  readonly state: PassState;
  readonly findings: Findings;
  /** Writes, in order. */
  readonly actions: readonly RolloutAction[];
  /** Stops and deletes of AnalysisRuns that no longer matter: harmless in any order, so they lead. */
  readonly housekeeping: readonly RolloutAction[];
  readonly events: readonly EmitEventAction[];
  /** Moments a timer can change the plan (ms since the epoch); the earliest becomes requeueAfter. */
  readonly wakeAtMs: readonly number[];
  /** Set by the sub-step that ends the pass; later sub-steps do not run. */
  readonly verdict?: Verdict;
}

/** A change to a pass: `state` and `findings` merge, lists append, `verdict` ends the pass. */
export interface PassChange {
  state?: Partial<PassState>;
  findings?: Partial<Findings>;
  actions?: readonly RolloutAction[];
  housekeeping?: readonly RolloutAction[];
  /** Drops the housekeeping and actions so far (an abort's recording pass writes only status and events). */
  clearWrites?: boolean;
  events?: readonly EmitEventAction[];
  wakeAtMs?: ReadonlyArray<number | undefined>;
  verdict?: Verdict;
}

/**
 * `kept` (none when `clear`) followed by `added`; `kept` itself when nothing changes. A pass is amended by
 * every sub-step and most add no write, so the lists are only copied when they change.
 */
function extended<T>(kept: readonly T[], added: readonly T[] | undefined, clear: boolean): readonly T[] {
  if (clear) return added === undefined ? [] : [...added];
  if (added === undefined || added.length === 0) return kept;
  return [...kept, ...added];
}

/** A new pass with `change` applied. */
export function amend(pass: Pass, change: PassChange): Pass {
  const clear = change.clearWrites === true;
  return {
    ...pass,
    state: change.state ? { ...pass.state, ...change.state } : pass.state,
    findings: change.findings ? { ...pass.findings, ...change.findings } : pass.findings,
    actions: extended(pass.actions, change.actions, clear),
    housekeeping: extended(pass.housekeeping, change.housekeeping, clear),
    events: change.events ? [...pass.events, ...change.events] : pass.events,
    wakeAtMs: change.wakeAtMs
      ? [...pass.wakeAtMs, ...change.wakeAtMs.filter((at): at is number => at !== undefined)]
      : pass.wakeAtMs,
    ...(change.verdict !== undefined ? { verdict: change.verdict } : {}),
  };
}

function isProgressWindow(value: unknown): value is ProgressWindow {
  if (typeof value !== 'object' || value === null) return false;
  const w = value as Record<string, unknown>;
  return (
    typeof w.since === 'string' &&
    typeof w.availableReplicas === 'number' &&
    typeof w.podTemplateHash === 'string'
  );
}

/** The bookkeeping from the live status; a new template starts from scratch (steps, pauses, abort, promote). */
export function readPassState(context: RolloutContext, revision: Revision): PassState {
  const live = context.status as PlannedRolloutStatus;
  const supersededPodHash =
    revision.supersededHash ??
    (typeof live.supersededPodHash === 'string' ? live.supersededPodHash : undefined);
  // Routes outlive a revision: a new one must still remove those of the canary it replaces.
  const managedRoutes = readManagedRoutes(live.managedRoutes);
  const rollbackWindow = withinRollbackWindow(context.spec.rollbackWindow?.revisions, revision);
  if (revision.newRevision) {
    return {
      managedRoutes,
      stepIndex: 0,
      pauseConditions: [],
      controllerPause: false,
      abort: false,
      promoteFull: rollbackWindow,
      rollbackWindow,
      supersededPodHash,
    };
  }
  const index = Number.isInteger(live.currentStepIndex) ? (live.currentStepIndex as number) : 0;
  return {
    stepIndex: Math.min(Math.max(0, index), context.steps.length),
    pauseConditions: Array.isArray(live.pauseConditions) ? [...live.pauseConditions] : [],
    controllerPause: live.controllerPause === true,
    abort: live.abort === true,
    abortedAt: typeof live.abortedAt === 'string' && live.abortedAt !== '' ? live.abortedAt : undefined,
    promoteFull: live.promoteFull === true || rollbackWindow,
    rollbackWindow,
    progress: isProgressWindow(live.progress) ? live.progress : undefined,
    supersededPodHash,
    managedRoutes,
  };
}

/**
 * Hashes whose missing scale-down deadline is expected rather than a defect to report: a canary that a
 * newer revision just replaced is announced by the supersede event instead.
 */
function quietHashes(context: RolloutContext, revision: Revision): Set<string> {
  const quiet = new Set<string>();
  const live = context.status as PlannedRolloutStatus;
  for (const hash of [revision.supersededHash, live.currentPodHash, live.supersededPodHash]) {
    if (typeof hash === 'string' && hash !== '') quiet.add(hash);
  }
  return quiet;
}

/** The first pass state: nothing decided yet. */
export function startPass(context: RolloutContext, revision: Revision): Pass {
  // Blue-green applies its own revision limit (src/rollout/blue-green/old-replica-sets.ts).
  const old = withScaleDownRevisionLimit(
    classifyOldReplicaSets(revision.others, context.now, quietHashes(context, revision), revision.stable),
    context.canary.scaleDownDelayRevisionLimit,
  );
  return {
    context,
    revision,
    old,
    state: readPassState(context, revision),
    findings: { deadlineExceeded: false, waitingFor: '', wantedRuns: [] },
    actions: [],
    housekeeping: [],
    events: [],
    wakeAtMs: old.map((entry) => entry.wakeAtMs).filter((at): at is number => at !== undefined),
  };
}

/** An event action. */
export function event(type: 'Normal' | 'Warning', reason: string, message: string): EmitEventAction {
  return { kind: 'emitEvent', type, reason, message };
}

/** A scale of `rs` to `replicas`, conditional on the resourceVersion it was planned from. */
export function scale(rs: ObservedReplicaSet, replicas: number): ScaleReplicaSetAction {
  return { kind: 'scaleReplicaSet', name: rs.name, resourceVersion: rs.resourceVersion, replicas };
}

/** `message; failures` when pods are failing, else `message`. */
export function withFailures(message: string, failures: string): string {
  return failures === '' ? message : `${message}; ${failures}`;
}
