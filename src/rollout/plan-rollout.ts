// The canary planner: one pure pass from (rollout, observed state, now) to actions, next status and requeue.
import { planRestart } from './plan-restart.ts';
import { planRunHistory } from './plan-run-history.ts';
import { ROLLOUT_DEFAULTS, type PauseCondition, type Rollout, type RolloutStatus } from '../spec/rollout.ts';
import {
  canaryReplicaCounts,
  type CanaryReplicaCounts,
  type ReplicaSetCount,
} from './canary-replica-counts.ts';
import { countRestartedReadyPods, describePodFailures, findPodFailures } from './failing-pods.ts';
import { InvalidSpecError } from './invalid-spec-error.ts';
import type { ObservedReplicaSet, ObservedState } from './observed-state.ts';
import { analysisRunName, analysisVerdict, createAnalysisRunAction, isStoppable } from './plan-analysis.ts';
import { planDeadline } from './plan-deadline.ts';
import { replicaSetName, planRevision, type Revision } from './plan-revision.ts';
import {
  assertDeadlineAnnotations,
  classifyOldReplicaSets,
  deadlineValue,
  oldReplicaSetWrites,
  parseDeadline,
  planRevisionHistory,
  type OldReplicaSet,
} from './plan-scale-down.ts';
import { applyInvalidSpec, applyOutcome, replicaCounts, type Outcome } from './plan-status.ts';
import {
  CANARY_PAUSE_STEP,
  INCONCLUSIVE_ANALYSIS_RUN,
  canaryScaleAt,
  canaryWeightAt,
  describeStep,
  planPauseStep,
} from './plan-steps.ts';
import { planTraffic, trafficIsSet, weightsStatus, type DesiredTraffic } from './plan-traffic.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  type CreateReplicaSetAction,
  type EmitEventAction,
  type RolloutAction,
  type ScaleReplicaSetAction,
} from './rollout-action.ts';
import { readRolloutContext, type RolloutContext } from './rollout-context.ts';
import type { PlannedRolloutStatus, ProgressWindow, RolloutPlan } from './rollout-plan.ts';

/** The rollout's own bookkeeping carried from one pass to the next through status. */
interface PassState {
  stepIndex: number;
  pauseConditions: PauseCondition[];
  controllerPause: boolean;
  abort: boolean;
  abortedAt?: string;
  promoteFull: boolean;
  progress?: ProgressWindow;
  supersededPodHash?: string;
}

/** Accumulates what one pass decides. */
interface Pass {
  context: RolloutContext;
  revision: Revision;
  state: PassState;
  events: EmitEventAction[];
  /** Stops analysis runs that no longer matter; harmless in any order, so they lead every pass. */
  housekeeping: RolloutAction[];
  wakeAtMs: number[];
}

const ZERO: ReplicaSetCount = { replicas: 0, available: 0 };

function isProgressWindow(value: unknown): value is ProgressWindow {
  if (typeof value !== 'object' || value === null) return false;
  const w = value as Record<string, unknown>;
  return (
    typeof w.since === 'string' &&
    typeof w.availableReplicas === 'number' &&
    typeof w.podTemplateHash === 'string'
  );
}

function readPassState(context: RolloutContext, revision: Revision): PassState {
  const live = context.status as PlannedRolloutStatus;
  const supersededPodHash =
    revision.supersededHash ??
    (typeof live.supersededPodHash === 'string' ? live.supersededPodHash : undefined);
  if (revision.newRevision) {
    // A new template restarts everything that belonged to the previous one: steps, pauses, abort, promote.
    return {
      stepIndex: 0,
      pauseConditions: [],
      controllerPause: false,
      abort: false,
      promoteFull: false,
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
    promoteFull: live.promoteFull === true,
    progress: isProgressWindow(live.progress) ? live.progress : undefined,
    supersededPodHash,
  };
}

function countOf(rs: ObservedReplicaSet | undefined): ReplicaSetCount {
  if (rs === undefined) return ZERO;
  return { replicas: rs.replicas, available: Math.min(rs.status.availableReplicas, rs.replicas) };
}

function event(type: 'Normal' | 'Warning', reason: string, message: string): EmitEventAction {
  return { kind: 'emitEvent', type, reason, message };
}

function scale(rs: ObservedReplicaSet, replicas: number): ScaleReplicaSetAction {
  return { kind: 'scaleReplicaSet', name: rs.name, resourceVersion: rs.resourceVersion, replicas };
}

function createReplicaSet(context: RolloutContext, hash: string, replicas: number): CreateReplicaSetAction {
  const template = context.rollout.spec.template;
  const labels = { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  return {
    kind: 'createReplicaSet',
    name: replicaSetName(context.name, hash),
    podTemplateHash: hash,
    replicas,
    template: { ...template, metadata: { ...(template.metadata ?? {}), labels } },
    selector: {
      matchLabels: { ...(context.spec.selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash },
    },
    labels,
    annotations: {},
    minReadySeconds: context.spec.minReadySeconds,
  };
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
}

function selectorString(context: RolloutContext): string | undefined {
  const labels = context.spec.selector.matchLabels;
  if (labels === undefined) return undefined;
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key] ?? ''}`)
    .join(',');
}

/** The status fields every branch writes, from the pass state. */
function baseStatus(pass: Pass, stableHash: string, weights: DesiredTraffic | 'keep'): PlannedRolloutStatus {
  const { context, revision, state } = pass;
  const live = context.status;
  const generation = context.rollout.metadata.generation;
  const canary =
    weights === 'keep'
      ? live.canary
      : dropUndefined({ ...(live.canary ?? {}), weights: weightsStatus(weights) });
  return dropUndefined({
    ...live,
    ...replicaCounts(context.observed.replicaSets, revision.current),
    currentPodHash: revision.hash,
    stableRS: stableHash,
    currentStepIndex: context.steps.length > 0 ? state.stepIndex : undefined,
    pauseConditions: state.pauseConditions.length > 0 ? state.pauseConditions : undefined,
    controllerPause: state.controllerPause ? true : undefined,
    abort: state.abort ? true : undefined,
    abortedAt: state.abortedAt,
    promoteFull: state.promoteFull ? true : undefined,
    progress: state.progress,
    supersededPodHash: state.supersededPodHash,
    canary,
    observedGeneration: generation !== undefined ? String(generation) : live.observedGeneration,
    selector: selectorString(context) ?? live.selector,
  }) as PlannedRolloutStatus;
}

/** How soon a failing traffic router is tried again when nothing else is pending. */
export const ROUTER_RETRY_MS = 5000;

function finish(
  pass: Pass,
  actions: RolloutAction[],
  status: PlannedRolloutStatus,
  immediate = false,
): RolloutPlan {
  if (
    pass.context.observed.traffic?.error !== undefined &&
    actions.some((a) => a.kind === 'setTrafficWeights')
  ) {
    pass.wakeAtMs.push(pass.context.now.getTime() + ROUTER_RETRY_MS);
  }
  const collected = immediate
    ? []
    : planRunHistory(
        pass.context.rollout.spec,
        pass.context.observed.analysisRuns,
        status.currentPodHash,
      ).filter(
        (gc) =>
          ![...pass.housekeeping, ...actions].some(
            (a) => a.kind === 'deleteAnalysisRun' && 'name' in gc && a.name === gc.name,
          ),
      );
  const all = [...pass.housekeeping, ...collected, ...actions, ...pass.events];
  const nowMs = pass.context.now.getTime();
  const finalStatus = status.message === '' ? (({ message: _m, ...rest }) => rest)(status) : status;
  if (immediate) return { actions: all, status: finalStatus, requeueAfterMs: 0 };
  const future = pass.wakeAtMs.filter((at) => Number.isFinite(at));
  if (future.length === 0) return { actions: all, status: finalStatus };
  return { actions: all, status: finalStatus, requeueAfterMs: Math.max(0, Math.min(...future) - nowMs) };
}

function outcome(
  pass: Pass,
  partial: Omit<Outcome, 'replicaSetName' | 'hash' | 'podFailures' | 'minimumAvailable'>,
): Outcome {
  const { context, revision } = pass;
  const available = context.observed.replicaSets.reduce((sum, rs) => sum + rs.status.availableReplicas, 0);
  return {
    ...partial,
    hash: revision.hash,
    replicaSetName: replicaSetName(context.name, revision.hash),
    minimumAvailable: available >= context.replicas - context.budget.maxUnavailable,
    podFailures: describePodFailures(findPodFailures(context.observed.pods, revision.hash)),
  };
}

function withFailures(message: string, failures: string): string {
  return failures === '' ? message : `${message}; ${failures}`;
}

function oldCounts(old: readonly OldReplicaSet[]): Array<ReplicaSetCount & { scaleDown: boolean }> {
  return old.map((entry) => ({ ...countOf(entry.rs), scaleDown: entry.due }));
}

/** An inconclusive AnalysisRun pauses the rollout (as Argo) until a human promotes or aborts (F4). */
function pauseForInconclusiveRun(pass: Pass, runName: string): void {
  pass.state.pauseConditions.push({
    reason: INCONCLUSIVE_ANALYSIS_RUN,
    startTime: pass.context.now.toISOString(),
  });
  pass.state.controllerPause = true;
  pass.events.push(
    event('Warning', 'AnalysisRunInconclusive', `AnalysisRun ${runName} is inconclusive: rollout paused`),
  );
}

/** Stops every run that is not the current step's or the active background run. */
function stopStaleRuns(pass: Pass, wanted: ReadonlySet<string>): void {
  for (const run of pass.context.observed.analysisRuns) {
    if (!wanted.has(run.name) && isStoppable(run))
      pass.housekeeping.push({ kind: 'terminateAnalysisRun', name: run.name });
  }
}

// ---------------------------------------------------------------------------------------------------
// No canary: first deploy (the revision becomes stable at once) or the current revision is the stable one.

function planPromoted(pass: Pass): RolloutPlan {
  const { context, revision, state } = pass;
  const { now, replicas } = context;
  const hash = revision.hash;
  const firstDeploy = revision.stableHash === undefined;
  const rs = revision.current;
  stopStaleRuns(pass, new Set());
  if (revision.newRevision && revision.supersededHash !== undefined && !firstDeploy) {
    // The template went back to the stable one mid-canary: the canary is superseded by the stable.
    pass.events.push(
      event(
        'Normal',
        'RolloutSuperseded',
        `Revision ${revision.supersededHash} superseded by the stable revision ${hash}; scaling it down`,
      ),
    );
  }
  state.stepIndex = context.steps.length;
  state.pauseConditions = [];
  state.controllerPause = false;
  state.abort = false;
  state.abortedAt = undefined;
  state.promoteFull = false;

  const old = classifyOldReplicaSets(revision.others, now, quietHashes(pass));
  for (const entry of old) if (entry.wakeAtMs !== undefined) pass.wakeAtMs.push(entry.wakeAtMs);
  const counts = canaryReplicaCounts({
    replicas,
    weight: 0,
    budget: context.budget,
    current: { canary: ZERO, stable: countOf(rs), others: oldCounts(old) },
  });

  const actions: RolloutAction[] = [];
  if (rs === undefined) {
    actions.push(createReplicaSet(context, hash, counts.next.stable));
    pass.events.push(
      event('Normal', 'ReplicaSetCreated', `Created ReplicaSet ${replicaSetName(context.name, hash)}`),
    );
  } else if (counts.next.stable > rs.replicas) {
    actions.push(scale(rs, counts.next.stable));
  }
  const desired: DesiredTraffic = { canaryWeight: 0, stableHash: hash };
  const routerError = context.observed.traffic?.error;
  const traffic = planTraffic({
    desired,
    status: context.status,
    routerError,
    services: context.observed.services,
    canaryService: context.canary.canaryService,
    stableService: context.canary.stableService,
  });
  if (routerError === undefined) actions.push(...traffic);
  if (actions.length === 0 || (rs !== undefined && actions.every((a) => a.kind !== 'scaleReplicaSet'))) {
    if (rs !== undefined && counts.next.stable < rs.replicas) actions.push(scale(rs, counts.next.stable));
    const writes = oldReplicaSetWrites(old, counts.next.others, now);
    actions.push(...writes.actions);
    pass.events.push(...writes.events);
    if (actions.length === 0)
      actions.push(...planRevisionHistory(revision.others, context.spec.revisionHistoryLimit));
  }
  if (routerError !== undefined) actions.push(...traffic);

  const available = rs === undefined ? 0 : countOf(rs).available;
  const deadline = planDeadline({
    hash,
    target: replicas,
    available,
    paused: context.spec.paused,
    window: state.progress,
    deadlineMs: context.spec.progressDeadlineSeconds * 1000,
    now,
  });
  if (deadline.wakeAtMs !== undefined) pass.wakeAtMs.push(deadline.wakeAtMs);

  const complete = rs !== undefined && rs.replicas === replicas && available >= replicas;
  // Once the revision is complete nothing is expected to progress: the window goes.
  state.progress = complete ? undefined : deadline.window;
  const failures = describePodFailures(findPodFailures(context.observed.pods, hash));
  const live = context.status;
  let phase: Outcome['phase'];
  let message: string;
  if (context.spec.paused) {
    phase = 'Paused';
    message = 'manually paused';
  } else if (deadline.exceeded) {
    phase = 'Degraded';
    message = withFailures(
      `ProgressDeadlineExceeded: ReplicaSet "${replicaSetName(context.name, hash)}" has timed out progressing`,
      failures,
    );
  } else if (complete) {
    phase = 'Healthy';
    message = '';
  } else {
    phase = 'Progressing';
    message = withFailures(
      rs === undefined || rs.replicas < replicas
        ? 'more replicas need to be updated'
        : 'updated replicas are still becoming available',
      failures,
    );
  }
  if (phase === 'Healthy' && live.phase !== 'Healthy') {
    pass.events.push(
      event(
        'Normal',
        'RolloutCompleted',
        firstDeploy ? `Rollout created revision ${hash}` : `Rollout is healthy at revision ${hash}`,
      ),
    );
  }
  if (deadline.exceeded && live.phase !== 'Degraded') {
    pass.events.push(event('Warning', 'ProgressDeadlineExceeded', message));
  }
  const trafficWeights = traffic.length === 0 || routerError === undefined ? desired : 'keep';
  const status = applyOutcome(
    baseStatus(pass, hash, trafficWeights),
    outcome(pass, {
      phase,
      message,
      aborted: false,
      deadlineExceeded: deadline.exceeded,
      paused: context.spec.paused,
      completed: complete,
    }),
    now,
  );
  return finish(pass, actions, status);
}

function quietHashes(pass: Pass): Set<string> {
  const quiet = new Set<string>();
  const live = pass.context.status as PlannedRolloutStatus;
  for (const hash of [pass.revision.supersededHash, live.currentPodHash, live.supersededPodHash]) {
    if (typeof hash === 'string' && hash !== '') quiet.add(hash);
  }
  return quiet;
}

// ---------------------------------------------------------------------------------------------------
// A canary in progress: stable exists and the current revision differs from it.

function planCanary(pass: Pass): RolloutPlan {
  const { context, revision, state } = pass;
  const { now, steps, replicas, name } = context;
  const live = context.status;
  const hash = revision.hash;
  const stable = revision.stable as ObservedReplicaSet;
  const stableHash = revision.stableHash as string;
  const rs = revision.current;
  const rsName = replicaSetName(name, hash);
  const routerError = context.observed.traffic?.error;
  const pods = context.observed.pods;
  const failures = describePodFailures(findPodFailures(pods, hash));
  const canaryCount = countOf(rs);
  // Pods that are Ready but have restarted are crash loops flapping Ready: not progress (F5).
  const honestAvailable = Math.max(0, canaryCount.available - countRestartedReadyPods(pods, hash));
  const old = classifyOldReplicaSets(revision.others, now, quietHashes(pass));
  for (const entry of old) if (entry.wakeAtMs !== undefined) pass.wakeAtMs.push(entry.wakeAtMs);

  const countsAt = (index: number, options: { hold?: boolean; weight?: number } = {}): CanaryReplicaCounts =>
    canaryReplicaCounts({
      replicas,
      weight: options.weight ?? canaryWeightAt(steps, index),
      budget: context.budget,
      minPodsPerReplicaSet: context.canary.minPodsPerReplicaSet,
      canaryScale: options.weight === undefined ? canaryScaleAt(steps, index) : undefined,
      holdCanary: options.hold,
      current: { canary: canaryCount, stable: countOf(stable), others: oldCounts(old) },
    });
  const trafficAt = (index: number): DesiredTraffic => ({
    canaryWeight: canaryWeightAt(steps, index),
    stableHash,
    canaryHash: hash,
  });
  const trafficFor = (desired: DesiredTraffic) =>
    planTraffic({
      desired,
      status: live,
      routerError,
      services: context.observed.services,
      canaryService: context.canary.canaryService,
      stableService: context.canary.stableService,
    });
  const stepRunName = (index: number) => analysisRunName(name, hash, index);
  const findRun = (runName: string) => context.observed.analysisRuns.find((run) => run.name === runName);

  if (revision.newRevision) {
    pass.events.push(
      revision.supersededHash !== undefined
        ? event(
            'Normal',
            'RolloutSuperseded',
            `Revision ${revision.supersededHash} superseded by ${hash} before it completed; scaling it down and restarting steps`,
          )
        : event('Normal', 'RolloutUpdated', `Rolling out revision ${hash} over stable ${stableHash}`),
    );
  }

  // Retry: the abort flag was cleared after an abort was recorded. Start over from step 0 with fresh runs.
  if (!state.abort && state.abortedAt !== undefined) {
    stopStaleRuns(pass, new Set());
    const deletes: RolloutAction[] = context.observed.analysisRuns
      .filter(
        (run) => run.labels[POD_TEMPLATE_HASH_LABEL] === hash || run.name.startsWith(`${name}-${hash}-`),
      )
      .map((run) => ({ kind: 'deleteAnalysisRun', name: run.name }));
    Object.assign(state, {
      stepIndex: 0,
      pauseConditions: [],
      controllerPause: false,
      abortedAt: undefined,
      progress: undefined,
      promoteFull: false,
    });
    pass.events.push(event('Normal', 'RolloutRetried', `Retrying update to revision ${hash} from step 0`));
    const status = applyOutcome(
      baseStatus(pass, stableHash, 'keep'),
      outcome(pass, {
        phase: 'Progressing',
        message: 'retrying',
        aborted: false,
        deadlineExceeded: false,
        paused: false,
        completed: false,
      }),
      now,
    );
    return finish(pass, deletes, status, true);
  }

  let abortCause: string | undefined;
  let deadlineExceeded = false;
  const background = context.background;
  const backgroundName = analysisRunName(name, hash, 'background');
  const backgroundRun = findRun(backgroundName);

  // A pause step waits on time or a human, not on pods: the clock runs whenever the canary is below its
  // step's target (pods crashing after a brief Ready). spec.paused and an inconclusive analysis stop it.
  const deadlineAt = (target: number) =>
    planDeadline({
      hash,
      target: rs === undefined ? Math.max(1, target) : target,
      available: honestAvailable,
      paused:
        context.spec.paused || state.pauseConditions.some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN),
      window: state.progress,
      deadlineMs: context.spec.progressDeadlineSeconds * 1000,
      now,
    });
  let deadlineWakeAtMs: number | undefined;

  if (!state.abort) {
    // Background analysis: a failure aborts; an inconclusive result pauses until promote or abort (F4).
    const verdict = analysisVerdict(backgroundRun);
    if (background !== undefined && backgroundRun !== undefined) {
      if (verdict === 'failed') {
        abortCause = `AnalysisRun ${backgroundName} ${backgroundRun.phase}${backgroundRun.message ? `: ${backgroundRun.message}` : ''}`;
      } else if (
        verdict === 'inconclusive' &&
        !state.pauseConditions.some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN)
      ) {
        if (state.controllerPause && state.pauseConditions.length === 0) {
          // Promoted while inconclusive: a fresh run replaces this one (created on the next pass).
          pass.housekeeping.push({ kind: 'deleteAnalysisRun', name: backgroundName });
          state.controllerPause = false;
        } else {
          pauseForInconclusiveRun(pass, backgroundName);
        }
      }
    }

    // Progress deadline: every pass, before and independent of traffic (F1, F5).
    const target = countsAt(state.promoteFull ? steps.length : state.stepIndex).target.canary;
    const deadline = deadlineAt(target);
    state.progress = deadline.window;
    deadlineWakeAtMs = deadline.wakeAtMs;
    deadlineExceeded = deadline.exceeded;
    if (deadline.exceeded && context.spec.progressDeadlineAbort && abortCause === undefined) {
      abortCause = withFailures(
        `ProgressDeadlineExceeded: ReplicaSet "${rsName}" has timed out progressing`,
        failures,
      );
    }
  }

  // Steps: advance while the current one is done.
  const stepActions: RolloutAction[] = [];
  let index = state.promoteFull ? steps.length : state.stepIndex;
  let waitingFor = '';
  const inconclusive = state.pauseConditions.some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN);
  if (!state.abort && abortCause === undefined && !context.spec.paused && !inconclusive) {
    while (index < steps.length) {
      const step = steps[index];
      if (step === undefined) break;
      if (step.kind === 'setWeight' || step.kind === 'setCanaryScale') {
        const counts = countsAt(index);
        const settled =
          rs !== undefined &&
          rs.replicas === counts.target.canary &&
          honestAvailable >= counts.target.canary &&
          stable.replicas === counts.target.stable &&
          trafficIsSet(live, trafficAt(index), routerError);
        if (!settled) break;
      } else if (step.kind === 'pause') {
        const result = planPauseStep({
          durationMs: step.durationMs,
          pauseConditions: state.pauseConditions,
          controllerPause: state.controllerPause,
          now,
        });
        if (!result.done) {
          state.pauseConditions = result.pauseConditions;
          state.controllerPause = true;
          if (result.wakeAtMs !== undefined) pass.wakeAtMs.push(result.wakeAtMs);
          if (result.started) {
            pass.events.push(
              event('Normal', 'RolloutPaused', `Rollout paused at step ${index}: ${describeStep(step)}`),
            );
          }
          break;
        }
        state.pauseConditions = state.pauseConditions.filter((c) => c.reason !== CANARY_PAUSE_STEP);
      } else {
        const runName = stepRunName(index);
        const run = findRun(runName);
        const verdict = analysisVerdict(run);
        if (verdict === 'missing') {
          stepActions.push(
            createAnalysisRunAction(name, step.analysis, { stable: stableHash, latest: hash }, index),
          );
          waitingFor = `waiting for AnalysisRun ${runName}`;
          break;
        }
        if (verdict === 'running') {
          waitingFor = `waiting for AnalysisRun ${runName}`;
          break;
        }
        if (verdict === 'failed') {
          abortCause = `AnalysisRun ${runName} ${run?.phase ?? 'Failed'}${run?.message ? `: ${run.message}` : ''}`;
          break;
        }
        if (verdict === 'inconclusive') {
          if (!(state.controllerPause && state.pauseConditions.length === 0)) {
            pauseForInconclusiveRun(pass, runName);
            break;
          }
          // Promoted while inconclusive: the step counts as passed.
        }
      }
      pass.events.push(
        event(
          'Normal',
          'RolloutStepCompleted',
          `Step ${index + 1}/${steps.length} completed: ${describeStep(step)}`,
        ),
      );
      index += 1;
      state.controllerPause = false;
    }
    if (index !== state.stepIndex) {
      // A new step may need a new target: the window follows it now, so the next pass changes nothing.
      const moved = deadlineAt(countsAt(index).target.canary);
      state.progress = moved.window;
      deadlineWakeAtMs = moved.wakeAtMs;
      deadlineExceeded = moved.exceeded;
    }
    state.stepIndex = index;
  }

  if (deadlineWakeAtMs !== undefined) pass.wakeAtMs.push(deadlineWakeAtMs);

  // Abort: recorded first, in a pass of its own (status and events only); then traffic, then scale (F1).
  if (abortCause !== undefined && !state.abort) state.abort = true;
  if (state.abort) {
    const recorded =
      state.abortedAt !== undefined &&
      live.phase === 'Degraded' &&
      (live.message ?? '').startsWith('RolloutAborted');
    state.pauseConditions = [];
    state.controllerPause = false;
    state.progress = undefined;
    state.promoteFull = false;
    if (!recorded) {
      const cause = abortCause ?? withFailures(`Rollout aborted update to revision ${hash}`, failures);
      const message = `RolloutAborted: ${cause}`;
      state.abortedAt = now.toISOString();
      pass.events.push(event('Warning', 'RolloutAborted', message));
      const status = applyOutcome(
        baseStatus(pass, stableHash, 'keep'),
        outcome(pass, {
          phase: 'Degraded',
          message,
          aborted: true,
          deadlineExceeded,
          paused: false,
          completed: false,
        }),
        now,
      );
      pass.housekeeping = [];
      return finish(pass, [], status, true);
    }
    return planAborted(pass, { rs, stable, stableHash, old, countsAt, trafficFor });
  }

  // Background analysis starts once the step index reaches startingStep.
  const wanted = new Set<string>();
  if (index < steps.length && steps[index]?.kind === 'analysis') wanted.add(stepRunName(index));
  const completing = index >= steps.length;
  if (
    background !== undefined &&
    !completing &&
    index >= (background.startingStep ?? ROLLOUT_DEFAULTS.canary.backgroundAnalysisStartingStep)
  ) {
    wanted.add(backgroundName);
    // A run deleted this pass (promoted while inconclusive) is recreated on the next one.
    if (backgroundRun === undefined) {
      stepActions.push(
        createAnalysisRunAction(name, background, { stable: stableHash, latest: hash }, 'background'),
      );
    }
  }
  stopStaleRuns(pass, wanted);

  // At most one canary with pods: while a superseded canary drains, the new one holds and the stable
  // takes the load (weight 0), which is also what frees the availability budget the drain needs.
  const draining = old.some((entry) => entry.due && entry.rs.replicas > 0);
  const counts = draining ? countsAt(index, { weight: 0, hold: true }) : countsAt(index);
  if (draining) counts.next.canary = Math.min(counts.next.canary, rs?.replicas ?? 0);
  const paused = context.spec.paused || state.pauseConditions.length > 0;

  // Completion: past the last step and the canary fully available → it becomes stable.
  if (
    completing &&
    rs !== undefined &&
    rs.replicas === replicas &&
    counts.target.canary === replicas &&
    honestAvailable >= replicas
  ) {
    return planCompletion(pass, { rs, stable, stableHash, trafficFor });
  }

  const actions: RolloutAction[] = [...stepActions];
  const desired = draining ? { ...trafficAt(index), canaryWeight: 0 } : trafficAt(index);
  const traffic = trafficFor(desired);
  let trafficEmitted = false;
  if (rs === undefined) {
    actions.push(createReplicaSet(context, hash, counts.next.canary));
    pass.events.push(event('Normal', 'ReplicaSetCreated', `Created canary ReplicaSet ${rsName}`));
  } else if (counts.next.canary > rs.replicas || counts.next.stable > stable.replicas) {
    // Phase 1: scale up (within the surge ceiling).
    if (counts.next.canary > rs.replicas) actions.push(scale(rs, counts.next.canary));
    if (counts.next.stable > stable.replicas) actions.push(scale(stable, counts.next.stable));
  } else if (traffic.length > 0) {
    // Phase 2: traffic, once the scale-up is observed. A router error is retried here and reported.
    actions.push(...traffic);
    trafficEmitted = true;
  } else {
    // Phase 3: scale down (within the availability floor), old ReplicaSets first.
    const writes = oldReplicaSetWrites(old, counts.next.others, now);
    actions.push(...writes.actions);
    pass.events.push(...writes.events);
    if (counts.next.canary < rs.replicas) actions.push(scale(rs, counts.next.canary));
    if (counts.next.stable < stable.replicas) actions.push(scale(stable, counts.next.stable));
    if (actions.length === 0)
      actions.push(...planRevisionHistory(revision.others, context.spec.revisionHistoryLimit));
  }

  let phase: Outcome['phase'];
  let message: string;
  if (deadlineExceeded) {
    phase = 'Degraded';
    message = withFailures(
      `ProgressDeadlineExceeded: ReplicaSet "${rsName}" has timed out progressing`,
      failures,
    );
    if (live.phase !== 'Degraded') pass.events.push(event('Warning', 'ProgressDeadlineExceeded', message));
  } else if (paused) {
    phase = 'Paused';
    message = context.spec.paused
      ? 'manually paused'
      : state.pauseConditions.some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN)
        ? `${INCONCLUSIVE_ANALYSIS_RUN}: an AnalysisRun is inconclusive; promote or abort`
        : state.pauseConditions.map((c) => c.reason).join(', ');
  } else {
    phase = 'Progressing';
    const detail =
      routerError !== undefined
        ? `TrafficRoutingError: ${routerError}`
        : waitingFor !== ''
          ? waitingFor
          : rs === undefined || rs.replicas < counts.target.canary
            ? 'more replicas need to be updated'
            : honestAvailable < counts.target.canary
              ? 'updated replicas are still becoming available'
              : stable.replicas > counts.target.stable || old.some((entry) => entry.rs.replicas > 0)
                ? 'old replicas are pending termination'
                : `at step ${index}`;
    message = withFailures(detail, failures);
  }
  const status = applyOutcome(
    baseStatus(pass, stableHash, trafficEmitted ? desired : 'keep'),
    outcome(pass, { phase, message, aborted: false, deadlineExceeded, paused, completed: false }),
    now,
  );
  return finish(pass, actions, status);
}

interface CanaryParts {
  rs: ObservedReplicaSet;
  stable: ObservedReplicaSet;
  stableHash: string;
  trafficFor: (desired: DesiredTraffic) => RolloutAction[];
}

function planCompletion(pass: Pass, parts: CanaryParts): RolloutPlan {
  const { context, revision, state } = pass;
  const { now } = context;
  const hash = revision.hash;
  const actions: RolloutAction[] = [];
  // The old stable keeps its pods until the deadline, written in the same write as its scale.
  if (parts.stable.replicas > 0) {
    const existing = parseDeadline(parts.stable.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]);
    if (existing === undefined || existing <= now.getTime()) {
      const delayMs = context.canary.scaleDownDelaySeconds * 1000;
      actions.push({
        kind: 'scaleReplicaSet',
        name: parts.stable.name,
        resourceVersion: parts.stable.resourceVersion,
        replicas: parts.stable.replicas,
        annotations: {
          [SCALE_DOWN_DEADLINE_ANNOTATION]: deadlineValue(parts.stable.name, now.getTime() + delayMs),
        },
      });
      pass.wakeAtMs.push(now.getTime() + delayMs);
    } else {
      pass.wakeAtMs.push(existing);
    }
  }
  const desired: DesiredTraffic = { canaryWeight: 0, stableHash: hash };
  const traffic = parts.trafficFor(desired);
  const routerError = context.observed.traffic?.error;
  actions.push(...traffic);
  stopStaleRuns(pass, new Set());
  Object.assign(state, {
    stepIndex: context.steps.length,
    pauseConditions: [],
    controllerPause: false,
    promoteFull: false,
    progress: undefined,
  });
  pass.events.push(
    event(
      'Normal',
      'RolloutCompleted',
      `Rollout completed update to revision ${hash} (previous stable ${parts.stableHash})`,
    ),
  );
  const status = applyOutcome(
    baseStatus(pass, hash, traffic.length === 0 || routerError === undefined ? desired : 'keep'),
    outcome(pass, {
      phase: 'Healthy',
      message: '',
      aborted: false,
      deadlineExceeded: false,
      paused: false,
      completed: true,
    }),
    now,
  );
  return finish(pass, actions, status);
}

function planAborted(
  pass: Pass,
  parts: Omit<CanaryParts, 'rs'> & {
    rs: ObservedReplicaSet | undefined;
    old: OldReplicaSet[];
    countsAt: (index: number, options?: { hold?: boolean; weight?: number }) => CanaryReplicaCounts;
  },
): RolloutPlan {
  const { context, revision, state } = pass;
  const { now } = context;
  const live = context.status;
  const routerError = context.observed.traffic?.error;
  stopStaleRuns(pass, new Set());
  const desired: DesiredTraffic = { canaryWeight: 0, stableHash: parts.stableHash };
  const traffic = parts.trafficFor(desired);
  const actions: RolloutAction[] = [];
  let trafficEmitted = false;

  const delayMs = context.canary.abortScaleDownDelaySeconds * 1000;
  const abortedAtMs = Date.parse(state.abortedAt ?? '');
  const scaleDownAt = (Number.isNaN(abortedAtMs) ? now.getTime() : abortedAtMs) + delayMs;
  const hold = delayMs === 0 || now.getTime() < scaleDownAt;
  if (delayMs > 0 && hold) pass.wakeAtMs.push(scaleDownAt);

  if (traffic.length > 0 && routerError === undefined) {
    // Traffic first: everything back to stable before any pod is touched.
    actions.push(...traffic);
    trafficEmitted = true;
  } else {
    const counts = parts.countsAt(0, { hold, weight: 0 });
    if (parts.rs !== undefined && counts.next.canary !== parts.rs.replicas)
      actions.push(scale(parts.rs, counts.next.canary));
    if (counts.next.stable !== parts.stable.replicas) actions.push(scale(parts.stable, counts.next.stable));
    const writes = oldReplicaSetWrites(parts.old, counts.next.others, now);
    actions.push(...writes.actions);
    pass.events.push(...writes.events);
    // A failing router is retried after the scale actions, so it never blocks them.
    if (traffic.length > 0) {
      actions.push(...traffic);
      trafficEmitted = true;
    }
  }
  // The message recorded with the abort stays: it names the cause, whatever the router does since.
  const message = live.message ?? `RolloutAborted: Rollout aborted update to revision ${revision.hash}`;
  const status = applyOutcome(
    baseStatus(pass, parts.stableHash, trafficEmitted ? desired : 'keep'),
    outcome(pass, {
      phase: 'Degraded',
      message,
      aborted: true,
      deadlineExceeded: false,
      paused: false,
      completed: false,
    }),
    now,
  );
  return finish(pass, actions, status);
}

/**
 * Adds the restart (spec.restartAt) to a pass: evictions go after everything else the pass does and only
 * when it leaves the ReplicaSets alone, so a restart never competes with a scale for the same budget.
 */
function withRestart(pass: Pass, plan: RolloutPlan): RolloutPlan {
  const { context, revision } = pass;
  const restart = planRestart({
    restartAt: context.spec.restartAt,
    restartedAt: context.status.restartedAt,
    now: context.now,
    newRevision: revision.newRevision,
    replicaSets: [revision.stable, revision.current],
    allReplicaSets: context.observed.replicaSets,
    desiredReplicas: context.replicas,
    pods: context.observed.pods,
    terminatingPods: context.observed.terminatingPods ?? 0,
    maxUnavailable: context.budget.maxUnavailable,
    // A pass that stops right after recording a phase (requeue 0) is followed at once by one that acts.
    reshaping:
      plan.requeueAfterMs === 0 ||
      plan.actions.some(
        (a) => a.kind === 'createReplicaSet' || a.kind === 'scaleReplicaSet' || a.kind === 'deleteReplicaSet',
      ),
  });
  if (restart.evictions.length === 0 && restart.events.length === 0 && restart.wakeAtMs === undefined)
    return plan;
  const events = plan.actions.filter((a) => a.kind === 'emitEvent');
  const writes = plan.actions.filter((a) => a.kind !== 'emitEvent');
  const wakeAfterMs =
    restart.wakeAtMs === undefined ? undefined : Math.max(0, restart.wakeAtMs - context.now.getTime());
  const requeueAfterMs =
    wakeAfterMs === undefined
      ? plan.requeueAfterMs
      : Math.min(plan.requeueAfterMs ?? Number.POSITIVE_INFINITY, wakeAfterMs);
  return {
    actions: [...writes, ...restart.evictions, ...events, ...restart.events],
    status:
      restart.restartedAt === undefined ? plan.status : { ...plan.status, restartedAt: restart.restartedAt },
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

function invalidPlan(rollout: Rollout, error: unknown, now: Date, reason: string): RolloutPlan {
  const message = error instanceof Error ? error.message : String(error);
  const live: RolloutStatus = rollout?.status ?? {};
  const generation = rollout?.metadata?.generation;
  const status = applyInvalidSpec(
    generation !== undefined ? { ...live, observedGeneration: String(generation) } : live,
    message,
    reason,
    now,
  );
  return { actions: [], status };
}

/**
 * Plans one reconcile pass of a canary Rollout. Pure and total: it never throws and reads nothing but its
 * arguments. An unusable spec yields condition InvalidSpec and no actions.
 *
 * Order of concerns in a pass: revision (supersede) → retry → background analysis → progress deadline →
 * steps (pause, analysis) → abort (recorded alone, then traffic, then scale) → completion → replicas in
 * phases (scale up, then traffic, then scale down, then old ReplicaSets and history).
 */
export function planRollout(rollout: Rollout, observed: ObservedState, now: Date): RolloutPlan {
  let context: RolloutContext;
  try {
    context = readRolloutContext(rollout, observed, now);
  } catch (error) {
    return invalidPlan(rollout, error, now, 'InvalidSpec');
  }
  try {
    const revision = planRevision(context);
    const pass: Pass = {
      context,
      revision,
      state: readPassState(context, revision),
      events: [],
      housekeeping: [],
      wakeAtMs: [],
    };
    const plan =
      revision.stableHash === undefined || revision.stableHash === revision.hash
        ? planPromoted(pass)
        : planCanary(pass);
    assertDeadlineAnnotations(plan.actions);
    return withRestart(pass, plan);
  } catch (error) {
    return invalidPlan(
      rollout,
      error,
      now,
      error instanceof InvalidSpecError ? 'InvalidSpec' : 'PlannerError',
    );
  }
}
