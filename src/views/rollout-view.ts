// A read-only summary of one rollout for humans and scripts: steps, weights, ReplicaSets, failing pods, pauses, analysis.
import { formatAnalysisRunViews, VIEW_MEASUREMENTS, type AnalysisRunView } from './analysis-run-view-text.ts';
import type { DrivenGroup } from '../manifest/driven-api.ts';
import { findRollout, RolloutNotFoundError } from './rollout-commands.ts';
import type { ObservedState } from '../rollout/index.ts';
// Not from rollout/index.ts: the barrel would bring the whole planner to `rollgate status`.
import { POD_TEMPLATE_HASH_LABEL, SCALE_DOWN_DEADLINE_ANNOTATION } from '../rollout/rollout-action.ts';
import { podsToRestart } from '../rollout/plan-restart.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { bothOrFirstFailure } from './both-or-first-failure.ts';
import { readAnalysisRunViews } from './read-analysis-runs.ts';
import { CANARY_PAUSE_STEP } from '../rollout/plan-steps.ts';
import { isDuration, parseDuration } from '../manifest/duration.ts';
import {
  ObservedStateReader,
  preloadRolloutSchema,
  type RolloutKey,
} from '../reconciler/observed-state-reader.ts';
import {
  formatRoutesView,
  readRolloutRoutes,
  type RouteReading,
  type RoutesView,
} from './route-weights-view.ts';

/**
 * One canary step as shown: its index, a short description, and where the rollout stands relative to it
 * (`aborted`: the step that was running when the update was aborted).
 */
export interface StepView {
  index: number;
  description: string;
  state: 'done' | 'current' | 'aborted' | 'pending';
  /** The current step is a timed pause that has started: whole seconds until it ends (0 once due). */
  pauseRemainingSeconds?: number;
}

/**
 * Seconds left of a timed pause step that is running: its CanaryPauseStep condition's start plus the
 * step's duration, minus `now`. Undefined for an indefinite pause, or before the pause has started.
 */
export function pauseRemainingSeconds(
  step: Record<string, unknown>,
  pauseConditions: ReadonlyArray<{ reason: string; startTime: string }>,
  now: Date,
): number | undefined {
  const duration = (step.pause as { duration?: unknown } | undefined)?.duration;
  if (!isDuration(duration)) return undefined;
  const started = pauseConditions.find((c) => c.reason === CANARY_PAUSE_STEP)?.startTime;
  if (started === undefined || Number.isNaN(Date.parse(started))) return undefined;
  const length = parseDuration(duration);
  const endsAt = Date.parse(started) + length;
  // A start time stamped by a clock a little ahead of this one would leave more than the whole pause.
  return Math.min(Math.ceil(length / 1000), Math.max(0, Math.ceil((endsAt - now.getTime()) / 1000)));
}

const ROLE_ORDER: ReadonlyArray<ReplicaSetView['role']> = ['canary', 'preview', 'stable', 'old'];

/** The active and preview Services of a blue-green rollout, with the revision each selects. */
export interface BlueGreenView {
  activeService: string;
  activeHash?: string;
  previewService?: string;
  previewHash?: string;
}

/** One ReplicaSet as shown. */
export interface ReplicaSetView {
  name: string;
  podTemplateHash: string;
  /** `preview`: the new revision of a blue-green rollout (`canary` in a canary one). */
  role: 'stable' | 'canary' | 'preview' | 'old';
  desired: number;
  current: number;
  ready: number;
  available: number;
  scaleDownDeadline?: string;
}

/** A pod that is not Ready, with the reason a user needs (ImagePullBackOff, CrashLoopBackOff, …). */
export interface FailingPodView {
  name: string;
  podTemplateHash: string;
  container: string;
  reason: string;
  message?: string;
  restartCount: number;
}

/** Everything `rollgate status` prints; the JSON output is exactly this object. */
export interface RolloutView {
  namespace: string;
  name: string;
  phase: string;
  message?: string;
  paused: boolean;
  aborted: boolean;
  abortedAt?: string;
  currentStepIndex?: number;
  steps: StepView[];
  /** What Rollgate asked the router for (status.canary.weights). */
  weights: { canary: number; stable: number };
  /** With trafficRouting: what each route object holds, read back, and where it drifted (filled by readRolloutView). */
  routes?: RoutesView;
  stableRS?: string;
  currentPodHash?: string;
  replicas: { desired: number; updated: number; ready: number; available: number };
  pauseConditions: Array<{ reason: string; startTime: string }>;
  replicaSets: ReplicaSetView[];
  failingPods: FailingPodView[];
  analysisRuns: Array<{ name: string; phase: string; message?: string }>;
  /** Each run's metrics and last measurements (filled by readRolloutView). */
  analysisRunDetails?: AnalysisRunView[];
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
  /** A blue-green rollout: its Services and the pod-template hash each selects now. */
  blueGreen?: BlueGreenView;
  /** spec.restartAt and how far the restart got (absent when no restart was ever asked for). */
  restart?: RestartView;
}

/**
 * A restart as shown: `scheduled` while restartAt is still ahead, `pending` until every stable/canary pod is
 * newer than it, then `done`.
 */
export interface RestartView {
  restartAt: string;
  state: 'scheduled' | 'pending' | 'done';
  /** Stable and canary pods created before restartAt. */
  podsToRestart: number;
}

function restartView(observed: ObservedState, now: Date | undefined): RestartView | undefined {
  const { spec, status } = observed.rollout;
  const restartAt = spec.restartAt;
  if (restartAt === undefined) return undefined;
  const atMs = Date.parse(restartAt);
  const doneMs = Date.parse(status?.restartedAt ?? '');
  const current = new Set([status?.stableRS, status?.currentPodHash].filter((h) => h !== undefined));
  const state = doneMs >= atMs ? 'done' : now !== undefined && now.getTime() < atMs ? 'scheduled' : 'pending';
  return { restartAt, state, podsToRestart: podsToRestart(observed.pods, current, restartAt).length };
}

/** A step as `rollgate status` and promotion pull requests show it. */
export function describeStep(step: Record<string, unknown>): string {
  if (step.setWeight !== undefined) return `setWeight: ${String(step.setWeight)}`;
  if (step.pause !== undefined) {
    const duration = (step.pause as { duration?: unknown } | null)?.duration;
    return duration === undefined ? 'pause (until promoted)' : `pause: ${String(duration)}`;
  }
  if (step.setCanaryScale !== undefined) {
    const scale = step.setCanaryScale as Record<string, unknown>;
    if (scale.replicas !== undefined) return `setCanaryScale: ${String(scale.replicas)} replicas`;
    if (scale.weight !== undefined) return `setCanaryScale: ${String(scale.weight)}%`;
    return 'setCanaryScale: match traffic weight';
  }
  if (step.analysis !== undefined) {
    const templates = ((step.analysis as { templates?: Array<{ templateName?: string }> }).templates ?? [])
      .map((t) => t.templateName)
      .join(', ');
    return `analysis: ${templates}`;
  }
  return Object.keys(step)[0] ?? 'unknown step';
}

/** Builds the view from an observed state (pure: tests call it without a cluster); `now` tells a scheduled restart. */
export function buildRolloutView(observed: ObservedState, now?: Date): RolloutView {
  const { rollout } = observed;
  const status = rollout.status ?? {};
  const steps = (rollout.spec.strategy.canary?.steps ?? []) as Array<Record<string, unknown>>;
  const currentStepIndex = status.currentStepIndex;
  const stepIndex = currentStepIndex ?? 0;
  const canaryWeight = status.canary?.weights?.canary.weight ?? 0;
  const stableWeight = status.canary?.weights?.stable.weight ?? 100 - canaryWeight;
  const replicaSets: ReplicaSetView[] = observed.replicaSets
    .map((rs): ReplicaSetView => {
      const role: ReplicaSetView['role'] =
        rs.podTemplateHash === status.stableRS
          ? 'stable'
          : rs.podTemplateHash === status.currentPodHash
            ? rollout.spec.strategy.blueGreen !== undefined
              ? 'preview'
              : 'canary'
            : 'old';
      const view: ReplicaSetView = {
        name: rs.name,
        podTemplateHash: rs.podTemplateHash,
        role,
        desired: rs.replicas,
        current: rs.status.replicas,
        ready: rs.status.readyReplicas,
        available: rs.status.availableReplicas,
      };
      const deadline = rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION];
      if (deadline !== undefined) view.scaleDownDeadline = deadline;
      return view;
    })
    .sort((a, b) => ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role));
  const failingPods: FailingPodView[] = [];
  for (const pod of observed.pods) {
    if (pod.ready) continue;
    for (const container of pod.containers) {
      const reason = container.waitingReason ?? container.terminatedReason;
      if (reason === undefined || reason === 'ContainerCreating') continue;
      const view: FailingPodView = {
        name: pod.name,
        podTemplateHash: pod.podTemplateHash,
        container: container.name,
        reason,
        restartCount: container.restartCount,
      };
      if (container.waitingMessage) view.message = container.waitingMessage;
      failingPods.push(view);
    }
  }
  const view: RolloutView = {
    namespace: rollout.metadata.namespace ?? 'default',
    name: rollout.metadata.name,
    phase: status.phase ?? 'Unknown',
    paused: rollout.spec.paused === true || (status.pauseConditions ?? []).length > 0,
    aborted: status.abort === true,
    steps: steps.map((step, index) => {
      const view: StepView = {
        index,
        description: describeStep(step),
        state:
          index < stepIndex
            ? 'done'
            : index === stepIndex
              ? status.abort === true
                ? 'aborted'
                : 'current'
              : 'pending',
      };
      const remaining =
        view.state === 'current' && now !== undefined
          ? pauseRemainingSeconds(step, status.pauseConditions ?? [], now)
          : undefined;
      if (remaining !== undefined) view.pauseRemainingSeconds = remaining;
      return view;
    }),
    weights: { canary: canaryWeight, stable: stableWeight },
    replicas: {
      desired: rollout.spec.replicas ?? 1,
      updated: status.updatedReplicas ?? 0,
      ready: status.readyReplicas ?? 0,
      available: status.availableReplicas ?? 0,
    },
    pauseConditions: (status.pauseConditions ?? []).map((c) => ({
      reason: c.reason,
      startTime: c.startTime,
    })),
    replicaSets,
    failingPods,
    analysisRuns: observed.analysisRuns.map((run) => ({
      name: run.name,
      phase: run.phase,
      ...(run.message ? { message: run.message } : {}),
    })),
    conditions: (status.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
    })),
  };
  if (status.message) view.message = status.message;
  if (status.abortedAt) view.abortedAt = status.abortedAt;
  if (currentStepIndex !== undefined) view.currentStepIndex = currentStepIndex;
  if (status.stableRS) view.stableRS = status.stableRS;
  if (status.currentPodHash) view.currentPodHash = status.currentPodHash;
  const blueGreen = rollout.spec.strategy.blueGreen;
  if (blueGreen !== undefined) {
    const hashOf = (service: string | undefined): string | undefined =>
      observed.services.find((candidate) => candidate.name === service)?.selector[POD_TEMPLATE_HASH_LABEL];
    const active = hashOf(blueGreen.activeService);
    const preview = hashOf(blueGreen.previewService);
    view.blueGreen = {
      activeService: blueGreen.activeService,
      ...(active !== undefined ? { activeHash: active } : {}),
      ...(blueGreen.previewService !== undefined ? { previewService: blueGreen.previewService } : {}),
      ...(preview !== undefined ? { previewHash: preview } : {}),
    };
  }
  const restart = restartView(observed, now);
  if (restart !== undefined) view.restart = restart;
  return view;
}

/**
 * Reads the rollout and builds its view; undefined when the Rollout does not exist. With `routing`,
 * a routed rollout's route objects are read too (reads only) and each route's weights shown: `routing`
 * is asked for only then, so an unrouted rollout's view never loads the routers.
 */
export async function readRolloutView(
  clients: ObjectReadClients,
  key: RolloutKey,
  now?: Date,
  routing?: () => Promise<RouteReading>,
  group?: DrivenGroup,
): Promise<RolloutView | undefined> {
  // Found as the verbs find it: in either group, ambiguous (thrown) when in both without `group`.
  let found: Awaited<ReturnType<typeof findRollout>>;
  try {
    const finding = findRollout(clients, key, group);
    // The schema's module loads while the Rollout is being fetched.
    preloadRolloutSchema();
    found = await finding;
  } catch (err) {
    if (err instanceof RolloutNotFoundError) return undefined;
    throw err;
  }
  const { api } = found;
  const live = found.live as Record<string, unknown>;
  // The runs are listed beside the rollout's other objects: the uid to pick them by is already known.
  // A failure is the rollout read's first, as when the runs were listed after it.
  const [read, analysisRunDetails] = await bothOrFirstFailure(
    new ObservedStateReader(clients, undefined, api).read(key, { rollout: live }),
    // The AnalysisRun schema (zod) loads only when the rollout has runs.
    readAnalysisRunViews(clients, key, uidOf(live), VIEW_MEASUREMENTS, api),
  );
  if (read === undefined) return undefined;
  const view = buildRolloutView(read.observed, now);
  const { rollout } = read.observed;
  const routes =
    routing === undefined || rollout.spec.strategy.canary?.trafficRouting === undefined
      ? undefined
      : await readRolloutRoutes(await routing(), rollout);
  if (routes !== undefined) view.routes = routes;
  view.analysisRunDetails = analysisRunDetails;
  return view;
}

/** metadata.uid of an object as read, '' without one. */
function uidOf(object: Record<string, unknown>): string {
  const uid = (object.metadata as { uid?: unknown } | undefined)?.uid;
  return typeof uid === 'string' ? uid : '';
}

/** The view as text, one fact per line, the current step marked with `▶` (`✘` where an abort stopped it). */
export function formatRolloutView(view: RolloutView): string {
  const lines: string[] = [];
  lines.push(`Name:       ${view.name}`);
  lines.push(`Namespace:  ${view.namespace}`);
  lines.push(`Status:     ${view.phase}${view.aborted ? ' (aborted)' : ''}${view.paused ? ' (paused)' : ''}`);
  if (view.message) lines.push(`Message:    ${view.message}`);
  if (view.blueGreen !== undefined) {
    const { activeService, activeHash, previewService, previewHash } = view.blueGreen;
    lines.push(`Active:     ${activeService} → ${activeHash ?? '(no revision selected)'}`);
    if (previewService !== undefined)
      lines.push(`Preview:    ${previewService} → ${previewHash ?? '(no revision selected)'}`);
  } else {
    lines.push(`Weights:    canary ${view.weights.canary}%, stable ${view.weights.stable}%`);
  }
  if (view.routes !== undefined) lines.push(...formatRoutesView(view.routes));
  lines.push(
    `Replicas:   desired ${view.replicas.desired}, updated ${view.replicas.updated}, ready ${view.replicas.ready}, available ${view.replicas.available}`,
  );
  if (view.stableRS) lines.push(`Stable:     ${view.stableRS}`);
  if (view.currentPodHash) lines.push(`Revision:   ${view.currentPodHash}`);
  if (view.steps.length > 0) {
    const complete = (view.currentStepIndex ?? 0) >= view.steps.length;
    lines.push(`Steps:${complete ? '      (all complete)' : ''}`);
    const abortReason = view.conditions.find((c) => c.type === 'Progressing' && c.status === 'False')?.reason;
    for (const step of view.steps) {
      const mark = { current: '▶', done: '✔', aborted: '✘', pending: ' ' }[step.state];
      const note =
        step.state === 'aborted' ? `   ← aborted here${abortReason ? ` (${abortReason})` : ''}` : '';
      lines.push(`  ${mark} ${step.index}: ${step.description}${note}`);
    }
  }
  if (view.restart !== undefined) {
    const { restartAt, state, podsToRestart } = view.restart;
    lines.push(
      state === 'done'
        ? `Restart:    done (every pod created after ${restartAt})`
        : state === 'scheduled'
          ? `Restart:    scheduled for ${restartAt}`
          : `Restart:    pods created before ${restartAt} are being replaced (${podsToRestart} left)`,
    );
  }
  if (view.pauseConditions.length > 0) {
    lines.push('Paused:');
    for (const condition of view.pauseConditions)
      lines.push(`  ${condition.reason} since ${condition.startTime}`);
  }
  if (view.replicaSets.length > 0) {
    lines.push('ReplicaSets:');
    for (const rs of view.replicaSets) {
      const deadline = rs.scaleDownDeadline ? `  scale-down at ${rs.scaleDownDeadline}` : '';
      lines.push(
        `  ${rs.name}  ${rs.role.padEnd(6)}  ready ${rs.ready}/${rs.desired}  available ${rs.available}${deadline}`,
      );
    }
  }
  if (view.failingPods.length > 0) {
    lines.push('Failing pods:');
    for (const pod of view.failingPods) {
      const message = pod.message ? `: ${pod.message}` : '';
      const restarts = pod.restartCount > 0 ? ` (restarts ${pod.restartCount})` : '';
      lines.push(`  ${pod.name} ${pod.container}: ${pod.reason}${message}${restarts}`);
    }
  }
  if (view.analysisRunDetails !== undefined) {
    lines.push(...formatAnalysisRunViews(view.analysisRunDetails));
  } else if (view.analysisRuns.length > 0) {
    lines.push('AnalysisRuns:');
    for (const run of view.analysisRuns)
      lines.push(`  ${run.name}  ${run.phase}${run.message ? `: ${run.message}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
