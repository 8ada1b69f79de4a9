// Applies a planner's actions (one handler per kind, from a table) and its status with conditional writes; stops the pass at the first conflict.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import type { JobLease } from '../queue/job-lease.ts';
import type { RolloutAction, RolloutPlan } from '../rollout/index.ts';
import { sameJson } from '../rollout/index.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import type { WriteResult } from './actions/action-handler.ts';
import { handleAction } from './actions/action-handlers.ts';
import { annotateRollout } from './actions/annotate-rollout.ts';
import type { AnalysisRunFactory } from './analysis-run-factory.ts';
import { FIELD_MANAGER, type KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { ObservedRead } from './observed-state-reader.ts';
import { writtenVersionOf, type WrittenVersion } from './read-policy.ts';
import type { TrafficRouter, TrafficRouterFactory } from './traffic-router.ts';
import { callsForAnotherPass, withRouterResult, type RouterCallResult } from './traffic-router-error.ts';

export type { WriteResult } from './actions/action-handler.ts';

/** One executed action (or the status write) and its result: good log and metric labels. */
export interface ActionOutcome {
  kind: RolloutAction['kind'] | 'annotateRollout' | 'patchRolloutStatus';
  target: string;
  result: WriteResult;
}

/** The report of one pass. `stoppedBy` is set when a write failed and the rest of the pass was skipped. */
export interface ExecutionReport {
  outcomes: ActionOutcome[];
  /** API writes sent (creates, updates, patches, deletes, evictions, status, events); a router call is not counted. */
  writes: number;
  /**
   * Writes that call for another pass at once: all but Events, and but a status write that only counts
   * one more failure of the same router error (see callsForAnotherPass). An Event or a router failure
   * repeated on every pass must not spin.
   */
  stateWrites: number;
  stoppedBy?: Error;
  /** The traffic router's error in this pass (also recorded in the status written). */
  trafficError?: string;
  statusWritten: boolean;
  /**
   * The status (and the Events that go with it) this pass planned but did not write, because its other
   * writes call for another pass at once and the caller let it hold them ({@link ExecuteOptions}): the
   * next pass plans from it and writes it, changed or not, with its own.
   */
  held?: HeldStatus;
  /** What the writes to cached kinds left (their responses' resourceVersions): the next pass waits for them. */
  written: WrittenVersion[];
}

type EmitEventAction = Extract<RolloutAction, { kind: 'emitEvent' }>;

/** A status planned and not yet written, with the Events recorded once it is. */
export interface HeldStatus {
  status: RolloutPlan['status'];
  events: EmitEventAction[];
}

/**
 * The writes after which a pass may hold its status: ReplicaSets created, scaled or relabelled, whose
 * effect the next pass reads back from the ReplicaSets themselves. A traffic router call, a Service
 * selector switch, an AnalysisRun or Experiment created or stopped, a pod evicted: the plans that
 * follow them rely on the status recording them first (e.g. a canary scales down only once the status
 * records the weights), so the pass that made them writes its status at once.
 */
const HOLDS_STATUS: ReadonlySet<RolloutAction['kind']> = new Set([
  'createReplicaSet',
  'scaleReplicaSet',
  'setReplicaSetPodMetadata',
]);

/** How one pass's status is written. */
export interface ExecuteOptions {
  /**
   * The pass may hold its status when its other writes (a ReplicaSet created or scaled, the Rollout
   * annotated) call for another pass at once: that pass plans from the held status and writes one status
   * for both. A status is the rollout's memory between jobs, so the caller lets a pass hold it only when
   * another pass of the same job follows.
   */
  mayHoldStatus?: boolean;
  /** Events of an earlier pass of the job whose status was held: recorded after this pass's status write. */
  heldEvents?: readonly EmitEventAction[];
  /** The job's lease, confirmed before each router call (see ROUTER_CALLS); none outside a queue job. */
  lease?: JobLease;
}

/**
 * The calls no resourceVersion of the plan fences: a traffic router writes its route objects conditional
 * only on the route as it reads it just then. A pass that lost its job's lock (a stall: another worker runs
 * the job meanwhile) would put back what a newer pass moved on from, so the lease is confirmed first.
 */
const ROUTER_CALLS: ReadonlySet<RolloutAction['kind']> = new Set([
  'setTrafficWeights',
  'reassertTrafficWeights',
  'setHeaderRoute',
  'setMirrorRoute',
]);

/** Dependencies of the executor. */
export interface ActionExecutorDeps {
  clients: KubeClients;
  /** The API the rollouts live in (default {@link ROLLGATE_API}). */
  api?: DrivenApi | undefined;
  logger: Logger;
  events: EventRecorder;
  /** Stamps the start of a traffic router failure streak (`status.trafficRouterError.since`). */
  clock: Clock;
  /** One router for every rollout (tests); wins over `routers`. */
  router?: TrafficRouter | undefined;
  /** The router of each rollout, from its trafficRouting (none: replica ratio). */
  routers?: TrafficRouterFactory | undefined;
  analysisRuns?: AnalysisRunFactory | undefined;
}

/** A call that tells the router the weights: one that answers ends a failure streak. */
function isWeightsCall(action: RolloutAction): boolean {
  return action.kind === 'setTrafficWeights' || action.kind === 'reassertTrafficWeights';
}

/** True when the planned status equals the live one (key order and undefined members ignored). */
export function isStatusNoop(live: unknown, planned: unknown): boolean {
  return sameJson(live ?? {}, planned ?? {});
}

/**
 * Executes one plan against what was read. Each action goes to its kind's handler
 * (`actions/action-handlers.ts`). Each write is conditional on the resourceVersion the plan was made
 * from (merge patch carrying metadata.resourceVersion, delete preconditions, status replace carrying
 * the Rollout's resourceVersion), or is a create that fails if the object exists. A write that would
 * change nothing is not sent. The first failed write stops the pass (`stoppedBy`): the caller re-reads
 * and re-plans; nothing is retried from stale state. A traffic router failure does not stop the pass:
 * it is recorded in the status written at its end (`status.trafficRouterError`), and removed again
 * once a router call succeeds. The executor decides nothing: holding the recorded weights on a pass at
 * rest (drift correction) is the planner's reassertTrafficWeights, run like any other action.
 */
export class ActionExecutor {
  private readonly api: DrivenApi;

  constructor(private readonly deps: ActionExecutorDeps) {
    this.api = deps.api ?? ROLLGATE_API;
  }

  async execute(
    plan: RolloutPlan,
    read: ObservedRead,
    options: ExecuteOptions = {},
  ): Promise<ExecutionReport> {
    const report: ExecutionReport = {
      outcomes: [],
      writes: 0,
      stateWrites: 0,
      statusWritten: false,
      written: [],
    };
    const context = {
      clients: this.deps.clients,
      api: this.api,
      logger: this.deps.logger,
      events: this.deps.events,
      router: this.deps.router ?? this.deps.routers?.(read.observed.rollout),
      analysisRuns: this.deps.analysisRuns,
      read,
      namespace: read.observed.rollout.metadata.namespace ?? 'default',
    };
    let router: RouterCallResult = { kind: 'none' };
    // Set when a write of this pass is one whose effect the status must record before anything follows.
    let mustRecord = false;
    // Events say what the pass did, so they are recorded once its status is written: a pass cut short (a
    // 409, an API error, the process killed) is planned again from the same status by whichever worker
    // runs it next and would otherwise record its Events a second time (a `count` bump per attempt).
    const events = [
      ...(options.heldEvents ?? []),
      ...plan.actions.filter((action): action is EmitEventAction => action.kind === 'emitEvent'),
    ];
    for (const action of plan.actions) {
      if (action.kind === 'emitEvent') continue;
      try {
        if (ROUTER_CALLS.has(action.kind)) await options.lease?.confirm();
        const { target, result, routerError, written } = await handleAction(action, context);
        report.outcomes.push({ kind: action.kind, target, result });
        if (written !== undefined) report.written.push(written);
        // Any router call (weights, header or mirror route) can fail; a failure in the pass is kept.
        if (routerError !== undefined) router = { kind: 'failed', message: routerError };
        else if (isWeightsCall(action) && router.kind !== 'failed') router = { kind: 'ok' };
        if (result !== 'unchanged' && result !== 'failed') {
          report.writes += 1;
          report.stateWrites += 1;
          if (!HOLDS_STATUS.has(action.kind)) mustRecord = true;
        }
      } catch (err) {
        report.stoppedBy = err instanceof Error ? err : new Error(String(err));
        return report;
      }
    }
    if (router.kind === 'failed') report.trafficError = router.message;
    // The Rollout as the status write replaces it: its own annotation write moves it to that write's version.
    let raw = read.raw;
    try {
      if (plan.annotations !== undefined) {
        const annotated = await annotateRollout(plan.annotations, { ...context, read });
        report.outcomes.push({
          kind: 'annotateRollout',
          target: read.observed.rollout.metadata.name,
          result: annotated.result,
        });
        if (annotated.written !== undefined) report.written.push(annotated.written);
        if (annotated.metadata !== undefined) raw = { ...raw, metadata: annotated.metadata };
        if (annotated.result === 'updated') report.writes += 1;
      }
    } catch (err) {
      report.stoppedBy = err instanceof Error ? err : new Error(String(err));
      return report;
    }
    const status = withRouterResult(plan.status, read.raw.status, router, this.deps.clock.now());
    // Another pass follows at once to see these writes: it writes one status for both (and the Events).
    if (
      options.mayHoldStatus === true &&
      !mustRecord &&
      report.stateWrites > 0 &&
      !isStatusNoop(read.raw.status, status)
    ) {
      report.held = { status, events };
      return report;
    }
    try {
      const { written, ...outcome } = await this.writeStatus(status, { ...read, raw });
      report.outcomes.push(outcome);
      if (written !== undefined) report.written.push(written);
      if (outcome.result === 'updated') {
        report.writes += 1;
        if (callsForAnotherPass(read.raw.status, status)) report.stateWrites += 1;
        report.statusWritten = true;
      }
    } catch (err) {
      report.stoppedBy = err instanceof Error ? err : new Error(String(err));
      return report;
    }
    for (const action of events) {
      // Recording never throws (EventRecorder is best effort); a failed one is reported as `failed`.
      const { target, result } = await handleAction(action, context);
      report.outcomes.push({ kind: action.kind, target, result });
      if (result !== 'unchanged' && result !== 'failed') report.writes += 1;
    }
    return report;
  }

  private async writeStatus(
    status: RolloutPlan['status'],
    read: ObservedRead,
  ): Promise<ActionOutcome & { written?: WrittenVersion }> {
    const rollout = read.observed.rollout;
    const target = rollout.metadata.name;
    if (isStatusNoop(read.raw.status, status))
      return { kind: 'patchRolloutStatus', target, result: 'unchanged' };
    const namespace = rollout.metadata.namespace ?? 'default';
    // A full replace of /status carrying the resourceVersion read: a concurrent change (a user's
    // promote, another writer) makes this fail with 409 instead of being overwritten. The status
    // subresource takes only `status` from the body, so Rollgate owns status fields and never the spec an
    // engine applies; managedFields are left out, since they are the server's record, not ours to send.
    const { managedFields: _managedFields, ...metadata } = (read.raw.metadata ?? {}) as Record<
      string,
      unknown
    >;
    const body = { ...read.raw, metadata, status };
    const replaced = await kubeCall(
      { verb: 'update', kind: 'Rollout', namespace, name: target, subresource: 'status' },
      () =>
        this.deps.clients.custom.replaceNamespacedCustomObjectStatus({
          group: this.api.group,
          version: this.api.version,
          namespace,
          plural: this.api.plurals.rollouts,
          name: target,
          body,
          fieldManager: FIELD_MANAGER,
        }),
    );
    const written = writtenVersionOf('Rollout', namespace, target, replaced);
    return { kind: 'patchRolloutStatus', target, result: 'updated', ...(written && { written }) };
  }
}
