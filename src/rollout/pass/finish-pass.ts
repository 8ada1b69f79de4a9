// The end of a pass: the next status from the verdict, and the pass's candidates for "when next".
import { nextStablePingPong } from '../../manifest/alb-traffic-routing.ts';
import { lookAt, nextLook, type LookCandidate, type NextLook } from '../../clock/next-look.ts';
import { formatLabelSelector } from '../../manifest/label-selector.ts';
import type { RolloutStatus } from '../../manifest/rollout.ts';
import type { ObservedReplicaSet } from '../observed-state.ts';
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { replicaSetName } from '../plan-revision.ts';
import { planRunHistory } from '../plan-run-history.ts';
import { applyOutcome, replicaCounts } from '../plan-status.ts';
import { weightsStatus } from '../plan-traffic.ts';
import { POD_TEMPLATE_HASH_LABEL, type RolloutAction } from '../rollout-action.ts';
import { fullWeightOf, type RolloutContext } from '../rollout-context.ts';
import type { PlannedRolloutStatus, RolloutPlan, TrafficRouterError } from '../rollout-plan.ts';
import type { Pass, Verdict } from './pass.ts';

/**
 * How long to wait before looking again while pods come up and nothing else is pending. A cluster
 * watch normally wakes the rollout sooner; this bounds how long a missed event can delay it.
 */
export const PODS_RESYNC_MS = 5_000;
/** The first retry of a failing traffic router; each further failure doubles it, up to {@link ROUTER_RETRY_MAX_MS}. */
export const ROUTER_RETRY_MS = 5_000;
export const ROUTER_RETRY_MAX_MS = 60_000;

/** The reasons the planner gives for looking again (the plan's `requeueReason`). */
export const LOOK_REASONS = {
  phaseRecorded: 'phase recorded',
  timer: 'timer',
  progressDeadline: 'progress deadline',
  routerRetry: 'traffic router retry',
  pods: 'waiting for pods',
  restart: 'restart',
} as const;

/** The plan's requeue fields from the decision (none without one). */
export function requeueOf(look: NextLook | undefined): Pick<RolloutPlan, 'requeueAfterMs' | 'requeueReason'> {
  return look === undefined ? {} : { requeueAfterMs: look.afterMs, requeueReason: look.reason };
}

/** The plan's own requeue as a candidate for a later step of the planner to feed into {@link nextLook}. */
export function requeueCandidate(plan: RolloutPlan): LookCandidate | undefined {
  return plan.requeueAfterMs === undefined
    ? undefined
    : { afterMs: plan.requeueAfterMs, reason: plan.requeueReason ?? LOOK_REASONS.timer };
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
}

function selectorString(context: RolloutContext, activeHash?: string): string | undefined {
  const { matchLabels, matchExpressions } = context.spec.selector;
  if (matchLabels === undefined && (matchExpressions ?? []).length === 0) return undefined;
  // Blue-green: the active ReplicaSet's selector (with its hash), so an HPA measures only the pods it serves.
  const labels: Record<string, string> =
    activeHash === undefined
      ? (matchLabels ?? {})
      : { ...matchLabels, [POD_TEMPLATE_HASH_LABEL]: activeHash };
  return formatLabelSelector({ matchLabels: labels, matchExpressions });
}

/** The router's failure streak as recorded in status, if any. */
export function routerErrorOf(context: RolloutContext): TrafficRouterError | undefined {
  const recorded = (context.status as PlannedRolloutStatus).trafficRouterError;
  const message = context.observed.traffic?.error ?? recorded?.message;
  if (message === undefined) return undefined;
  return {
    message,
    failures: recorded?.failures ?? 0,
    since: recorded?.since ?? context.now.toISOString(),
    ...(recorded?.at !== undefined ? { at: recorded.at } : {}),
  };
}

/**
 * When a failing router may be called again: the last failure plus a backoff that doubles with each
 * failure of the streak. Undefined when the router is not failing.
 */
export function routerRetryAtMs(context: RolloutContext): number | undefined {
  const error = routerErrorOf(context);
  if (error === undefined) return undefined;
  const recorded = (context.status as PlannedRolloutStatus).trafficRouterError;
  const last = Date.parse(recorded?.at ?? recorded?.since ?? '');
  // A failure with no recorded time is retried now.
  if (Number.isNaN(last)) return context.now.getTime();
  return last + routerBackoffMs(error.failures);
}

/** The wait after the `failures`-th consecutive failure. */
function routerBackoffMs(failures: number): number {
  return Math.min(ROUTER_RETRY_MAX_MS, ROUTER_RETRY_MS * 2 ** Math.max(0, Math.min(failures - 1, 10)));
}

function settled(rs: ObservedReplicaSet): boolean {
  return rs.status.replicas === rs.replicas && rs.status.availableReplicas >= rs.replicas;
}

/**
 * With a router, weights that take all traffic away from a canary (abort, supersede, a canary without
 * available pods) lead the plan, before run housekeeping and every other write: requests must leave the
 * canary before anything else happens (unless the router is failing: then its retry comes after the
 * scale actions it must not block). A promotion's reset (stable = the new hash) keeps its place after
 * the stable Service switch.
 */
function trafficLeavingCanaryFirst(pass: Pass, actions: readonly RolloutAction[]): RolloutAction[] {
  // A failing router's retry keeps its place after the scale actions (it never blocks them).
  if (pass.context.router === undefined || routerErrorOf(pass.context) !== undefined) return [...actions];
  const leads = (action: RolloutAction): boolean =>
    action.kind === 'setTrafficWeights' &&
    action.canaryWeight === 0 &&
    action.stableHash !== pass.revision.hash;
  return [...actions.filter(leads), ...actions.filter((action) => !leads(action))];
}

/** status.canary without the recorded weights (undefined when nothing else is left). */
function withoutWeights(canary: RolloutStatus['canary']): RolloutStatus['canary'] {
  if (canary === undefined) return undefined;
  const { weights: _forgotten, ...rest } = canary;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/**
 * Blue-green: the observed ReplicaSet the active Service selects once this pass's writes are done
 * (status.blueGreen.activeSelector as recorded); undefined for a canary or before any is selected.
 */
function activeReplicaSetOf(pass: Pass, verdict: Verdict): ObservedReplicaSet | undefined {
  if (pass.context.rollout.spec.strategy.blueGreen === undefined) return undefined;
  const recorded = (verdict.blueGreen ?? pass.context.status.blueGreen) as
    { activeSelector?: unknown } | undefined;
  const hash = recorded?.activeSelector;
  if (typeof hash !== 'string' || hash === '') return undefined;
  return pass.context.observed.replicaSets.find((rs) => rs.podTemplateHash === hash);
}

/** The status fields every pass writes, from its state and verdict. */
function baseStatus(pass: Pass, verdict: Verdict): PlannedRolloutStatus {
  const { context, revision, state } = pass;
  const live = context.status;
  const generation = context.rollout.metadata.generation;
  const canary =
    verdict.weights === 'keep'
      ? live.canary
      : verdict.weights === 'forget'
        ? withoutWeights(live.canary)
        : dropUndefined({
            ...(live.canary ?? {}),
            weights: weightsStatus(verdict.weights, fullWeightOf(context)),
          });
  // Ping-pong: the roles swap in the same write that names the new stable (see pingPongRolesFor).
  const pingPong = context.canary.pingPong;
  const canaryWithRoles =
    pingPong === undefined
      ? canary
      : dropUndefined({
          ...(canary ?? {}),
          stablePingPong: nextStablePingPong(live.canary?.stablePingPong, live.stableRS, verdict.stableHash),
        });
  const active = activeReplicaSetOf(pass, verdict);
  const counts = replicaCounts(context.observed.replicaSets, revision.current, active);
  return dropUndefined({
    ...live,
    ...counts,
    // The scale subresource reads the pods the rollout runs from here (an HPA's current replicas), as Argo:
    // in blue-green the active ReplicaSet's pods only (a waiting preview is not capacity).
    HPAReplicas: active?.status.replicas ?? counts.replicas,
    currentPodHash: revision.hash,
    stableRS: verdict.stableHash,
    currentStepIndex: context.steps.length > 0 ? state.stepIndex : undefined,
    pauseConditions: state.pauseConditions.length > 0 ? [...state.pauseConditions] : undefined,
    controllerPause: state.controllerPause ? true : undefined,
    abort: state.abort ? true : undefined,
    abortedAt: state.abortedAt,
    promoteFull: state.promoteFull && state.rollbackWindow !== true ? true : undefined,
    progress: state.progress,
    supersededPodHash: state.supersededPodHash,
    managedRoutes: state.managedRoutes.length > 0 ? [...state.managedRoutes] : undefined,
    canary: canaryWithRoles,
    blueGreen: verdict.blueGreen ?? live.blueGreen,
    observedGeneration: generation !== undefined ? String(generation) : live.observedGeneration,
    selector: selectorString(context, active?.podTemplateHash) ?? live.selector,
  }) as PlannedRolloutStatus;
}

/**
 * Turns a finished pass into the plan: actions in order (housekeeping, run history, writes, events; with a router, weights leaving a canary first), the
 * complete next status, and the pass's candidates for when to look again, fed into {@link nextLook}
 * (the one minimum): at once after a pass that only recorded a phase; otherwise the sub-steps'
 * timers (pause end, scale-down deadlines, abort delay, auto-promotion), the progress deadline, the
 * router's retry when it is failing (a backoff), and {@link PODS_RESYNC_MS} while a ReplicaSet still
 * waits for its pods.
 */
export function finishPass(pass: Pass & { verdict: Verdict }): RolloutPlan {
  const { context, revision, verdict } = pass;
  const now = context.now;
  const routerError = routerErrorOf(context);
  const rsName = replicaSetName(context.name, revision.hash);
  const base = baseStatus(pass, verdict);
  // Available pods as reported (blue-green: the active ReplicaSet's), as Argo's Available condition reads them.
  const available = base.availableReplicas ?? 0;
  let status = applyOutcome(
    base,
    {
      phase: verdict.phase,
      message: verdict.message,
      aborted: verdict.aborted,
      deadlineExceeded: verdict.deadlineExceeded,
      paused: verdict.paused,
      completed: verdict.completed,
      hash: revision.hash,
      replicaSetName: rsName,
      minimumAvailable: available >= context.replicas - context.budget.maxUnavailable,
      podFailures: describePodFailures(findPodFailures(context.observed.pods, revision.hash)),
    },
    now,
  );
  if (status.message === '') {
    const { message: _dropped, ...rest } = status;
    status = rest;
  }
  if (verdict.immediate === true) {
    const look = nextLook([{ afterMs: 0, reason: LOOK_REASONS.phaseRecorded }]);
    return { actions: [...pass.housekeeping, ...pass.actions, ...pass.events], status, ...requeueOf(look) };
  }

  const planned: readonly RolloutAction[] = [...pass.housekeeping, ...pass.actions];
  const collected = planRunHistory(context.rollout.spec, context.observed.analysisRuns, revision.hash).filter(
    (gc) => !planned.some((a) => a.kind === 'deleteAnalysisRun' && 'name' in gc && a.name === gc.name),
  );
  const actions = trafficLeavingCanaryFirst(pass, [
    ...pass.housekeeping,
    ...collected,
    ...pass.actions,
    ...pass.events,
  ]);

  const candidates: Array<LookCandidate | undefined> = pass.wakeAtMs.map((at) =>
    lookAt(at, now, LOOK_REASONS.timer),
  );
  const retryAt = routerRetryAtMs(context);
  if (routerError !== undefined && retryAt !== undefined) {
    // A retry due now is sent by this pass: if it fails too, the next one waits one more backoff step.
    const at = retryAt > now.getTime() ? retryAt : now.getTime() + routerBackoffMs(routerError.failures + 1);
    candidates.push(lookAt(at, now, LOOK_REASONS.routerRetry, 'backoff'));
  }
  if (pass.findings.deadlineWakeAtMs !== undefined)
    candidates.push(lookAt(pass.findings.deadlineWakeAtMs, now, LOOK_REASONS.progressDeadline));
  if (!context.observed.replicaSets.every(settled))
    candidates.push({ afterMs: PODS_RESYNC_MS, reason: LOOK_REASONS.pods });
  return { actions, status, ...requeueOf(nextLook(candidates)) };
}
