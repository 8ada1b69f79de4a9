// The result of one planning pass: actions, the complete next status, and when to look again.
import type { RolloutStatus } from '../manifest/rollout.ts';
import type { RolloutAction } from './rollout-action.ts';

/**
 * The progress-deadline window (see planDeadline). Progress = the canary ReplicaSet's available replicas
 * rising above `availableReplicas` (the highest count seen in this window), so readiness flaps never
 * reset it.
 */
export interface ProgressWindow {
  /** RFC 3339: when the current no-progress window started. */
  since: string;
  /** Highest available-replica count of the canary seen since `since`. */
  availableReplicas: number;
  /** The revision the window belongs to; a new revision starts a new window. */
  podTemplateHash: string;
  /** The available count the current step needs; a new target starts a new window. */
  target: number;
  /** The window's start before the last progress; restored if that progress is lost again (a flap). */
  previousSince?: string;
  /** Set while the rollout is paused; the clock restarts when the pause ends. */
  paused?: boolean;
}

/** Argo's status plus the fields Rollgate adds (kept by the CRD's preserve-unknown-fields). */
export type PlannedRolloutStatus = RolloutStatus & {
  progress?: ProgressWindow;
  /** The last canary hash replaced by a newer revision before it completed. */
  supersededPodHash?: string;
  /**
   * The traffic router's failure streak, recorded by the executor in the status it writes after a
   * setTrafficWeights call failed (removed once one succeeds). The planner reads it as
   * `observed.traffic.error`: a failing router is retried and reported, and never blocks an abort.
   */
  trafficRouterError?: TrafficRouterError;
  /**
   * Header and mirror routes the planner asked the router for and has not seen removed yet; `removed`
   * marks a removal sent, dropped from the list once the router took it (no router error after it).
   */
  managedRoutes?: ManagedRouteRecord[];
};

/** One route of {@link PlannedRolloutStatus.managedRoutes}. */
export interface ManagedRouteRecord {
  name: string;
  kind: 'setHeaderRoute' | 'setMirrorRoute';
  removed?: boolean;
  /** The step of the current canary that sent it: a step waiting beside its route sends it only once. */
  step?: number;
}

/** A traffic-router failure streak (see {@link PlannedRolloutStatus.trafficRouterError}). */
export interface TrafficRouterError {
  message: string;
  /** Consecutive failed calls. */
  failures: number;
  /** RFC 3339: the first failure of the streak. */
  since: string;
  /** RFC 3339: the latest failure (the retry is timed from it; `since` when absent). */
  at?: string;
}

/**
 * One pass of the planner.
 * - `actions`: run in order; stop at the first failure (a 409 means re-read and re-plan).
 * - `status`: the complete next status (unknown live fields kept); replace the /status subresource with it,
 *   conditional on the resourceVersion read, only if it differs from the live one. Do not merge-patch it:
 *   fields the planner drops (pauseConditions, abort, …) must disappear.
 * - `requeueAfterMs`: the earliest moment a timer can change the plan (pause end, progress deadline,
 *   scale-down deadline, abort delay); absent when only a cluster change can. `0` means "plan again
 *   right away" (a pass that deliberately stopped after recording a phase, e.g. the abort).
 *   A pass whose writes changed something (the status included) is followed by another pass once they
 *   are applied; writes that change nothing (a reassertTrafficWeights at rest, the router holding those
 *   weights already) do not call for one. Decided by `nextLook` (src/clock/next-look.ts), the one
 *   minimum of every candidate the pass has.
 * - `annotations`: annotations the Rollout itself must carry (its revision number, as Argo's tools read it):
 *   merge-patched on the Rollout before the status, conditional on the resourceVersion read, only when
 *   one differs; the status replace then carries the version that write left. Like the status, it is
 *   the rollout's own record, not an action.
 * - `requeueReason`: why, when there is a `requeueAfterMs` (`timer`, `progress deadline`, `waiting for
 *   pods`, `traffic router retry`, `restart`, `phase recorded`); the reconcile's requeue reason.
 */
export interface RolloutPlan {
  actions: RolloutAction[];
  status: PlannedRolloutStatus;
  annotations?: Record<string, string>;
  requeueAfterMs?: number;
  requeueReason?: string;
}
