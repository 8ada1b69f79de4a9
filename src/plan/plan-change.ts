// `rollgate plan`'s core: is a Rollout change a new revision, and if so, what the planner will do step by step (a simulation on fake time).
import {
  INCONCLUSIVE_ANALYSIS_RUN,
  STEP_INDEX_LABEL,
  canonicalJson,
  podTemplateHash,
  type RolloutPlan,
} from '../rollout/index.ts';
import { parseDuration } from '../manifest/duration.ts';
import type { CanaryStep, Rollout } from '../manifest/rollout.ts';
import { InMemoryWorld } from './in-memory-world.ts';

/** What the change is. */
export type ChangeKind =
  /** No previous version: the first revision is created at full scale, without steps (as Argo does). */
  | 'new-rollout'
  /** The pod template changed: the steps run. */
  | 'new-revision'
  /** Only other fields changed (replicas, strategy, …): pods are scaled or kept, no step runs. */
  | 'not-a-new-revision'
  | 'unchanged';

/** One canary step as the simulation went through it. */
export interface PlannedStep {
  index: number;
  /** `setWeight: 20`, `pause: 10m`, `pause (until promoted)`, `analysis: success-rate`, … */
  action: string;
  /** Replicas of the new and of the stable ReplicaSet when the step is done. */
  canary: number;
  stable: number;
  /** Canary traffic weight (%) when the step is done. */
  weight: number;
  /** A timed pause's length. */
  pauseMs?: number;
  /** An indefinite pause: it waits for `rollgate promote` (or a Git approval); counted as no time. */
  untilPromoted?: boolean;
  /** AnalysisRuns the step starts (by name). */
  analysisRuns: string[];
  /** Earliest time after the change at which the step is done. */
  doneAfterMs: number;
}

/** The plan of one Rollout's change. */
export interface ChangePlan {
  namespace: string;
  name: string;
  change: ChangeKind;
  /** Container images of the previous and the new pod template. */
  images: { before: string[]; after: string[] };
  /** Pod-template hashes (the ReplicaSets' `rollouts-pod-template-hash`). */
  podTemplateHash: { before?: string; after: string };
  /** The spec fields other than the template that changed, `replicas: 3 → 5` or just `strategy`. */
  specChanges: string[];
  strategy: 'Canary' | 'BlueGreen';
  steps: PlannedStep[];
  /** Background AnalysisRuns the new revision starts (by name). */
  backgroundAnalysisRuns: string[];
  /**
   * Earliest time to full promotion (the new revision stable, all traffic on it): pods ready at once,
   * analysis successful at once, indefinite pauses promoted at once. Absent when no revision runs.
   */
  minPromotionMs?: number;
  /** How often the simulation had to promote by hand (indefinite pauses, a blue-green pause without auto-promotion). */
  manualPromotions: number;
}

/** The simulation did not reach full promotion: a planner state the simulation cannot get out of. */
export class PlanSimulationError extends Error {
  override readonly name = 'PlanSimulationError';
  readonly code = 'plan.simulation_stuck';
  constructor(
    readonly rollout: string,
    readonly status: unknown,
  ) {
    super(`the simulation of ${rollout} did not reach full promotion; last status ${JSON.stringify(status)}`);
  }
}

/** Where simulated time starts; only differences of it are reported. */
const SIMULATION_START = Date.UTC(2026, 0, 1);
/** The longest a simulation may run in fake time, and in passes, before it is declared stuck. */
const MAX_SIMULATED_MS = 366 * 86_400_000;
const MAX_PASSES = 20_000;
/** A pass that wrote nothing and asked for no requeue is followed by this much fake time. */
const IDLE_TICK_MS = 1_000;

function imagesOf(rollout: Rollout): string[] {
  const containers = (rollout.spec.template as { spec?: { containers?: Array<{ image?: unknown }> } }).spec
    ?.containers;
  return (containers ?? []).map((c) => c.image).filter((image): image is string => typeof image === 'string');
}

/** A step as the plan names it. */
export function describePlannedStep(step: CanaryStep): string {
  if (step.setWeight !== undefined) return `setWeight: ${step.setWeight}`;
  if (step.pause !== undefined)
    return step.pause.duration === undefined
      ? 'pause (until promoted)'
      : `pause: ${String(step.pause.duration)}`;
  if (step.analysis !== undefined)
    return `analysis: ${(step.analysis.templates ?? []).map((t) => t.templateName).join(', ')}`;
  if (step.setCanaryScale !== undefined) {
    const scale = step.setCanaryScale;
    if (scale.replicas !== undefined) return `setCanaryScale: ${scale.replicas} replicas`;
    if (scale.weight !== undefined) return `setCanaryScale: ${scale.weight}%`;
    return 'setCanaryScale: match traffic weight';
  }
  if (step.setHeaderRoute !== undefined) return `setHeaderRoute: ${step.setHeaderRoute.name}`;
  if (step.setMirrorRoute !== undefined) return `setMirrorRoute: ${step.setMirrorRoute.name}`;
  if (step.experiment !== undefined) return 'experiment';
  if (step.plugin !== undefined) return `plugin: ${step.plugin.name}`;
  return 'unknown step';
}

function specChanges(before: Rollout, after: Rollout): string[] {
  const a = before.spec as Record<string, unknown>;
  const b = after.spec as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((key) => key !== 'template')
    .sort();
  const changes: string[] = [];
  for (const key of keys) {
    if (canonicalJson(a[key] ?? null) === canonicalJson(b[key] ?? null)) continue;
    const scalar = (value: unknown): value is string | number | boolean | undefined =>
      value === undefined || ['string', 'number', 'boolean'].includes(typeof value);
    const show = (value: unknown): string => (value === undefined ? '(unset)' : String(value));
    changes.push(scalar(a[key]) && scalar(b[key]) ? `${key}: ${show(a[key])} → ${show(b[key])}` : key);
  }
  return changes;
}

/** A previous version to simulate from when none is known: the same spec, with a template that differs. */
function syntheticPrevious(next: Rollout): Rollout {
  const previous = structuredClone(next);
  const template = previous.spec.template as { metadata?: { annotations?: Record<string, string> } };
  template.metadata = {
    ...template.metadata,
    annotations: { ...template.metadata?.annotations, 'rollgate.dev/plan-previous': 'true' },
  };
  return previous;
}

/**
 * Compares `next` with `previous` (undefined: not known) and, for a new revision, runs the pure planner
 * against an in-memory cluster on fake time, from the previous version fully rolled out until the new
 * one is: pods ready at once, AnalysisRuns successful at once, indefinite pauses promoted at once.
 * `previous: null` means "known not to exist" (a new Rollout).
 */
export function planChange(next: Rollout, previous: Rollout | undefined | null): ChangePlan {
  const name = next.metadata.name;
  const namespace = next.metadata.namespace ?? 'default';
  const afterHash = podTemplateHash(next.spec.template);
  const blueGreen = next.spec.strategy.blueGreen !== undefined;
  const plan: ChangePlan = {
    namespace,
    name,
    change: 'new-revision',
    images: { before: previous ? imagesOf(previous) : [], after: imagesOf(next) },
    podTemplateHash: { after: afterHash },
    specChanges: previous ? specChanges(previous, next) : [],
    strategy: blueGreen ? 'BlueGreen' : 'Canary',
    steps: [],
    backgroundAnalysisRuns: [],
    manualPromotions: 0,
  };
  if (previous === null) return { ...plan, change: 'new-rollout', minPromotionMs: 0 };
  if (previous !== undefined) {
    const beforeHash = podTemplateHash(previous.spec.template);
    plan.podTemplateHash.before = beforeHash;
    if (beforeHash === afterHash)
      return { ...plan, change: plan.specChanges.length === 0 ? 'unchanged' : 'not-a-new-revision' };
  }
  return simulate(plan, next, previous ?? syntheticPrevious(next));
}

function simulate(plan: ChangePlan, next: Rollout, previous: Rollout): ChangePlan {
  const start: Rollout = {
    ...structuredClone(next),
    metadata: { ...next.metadata, generation: 1, uid: `uid-${next.metadata.name}` },
    spec: { ...structuredClone(next.spec), template: structuredClone(previous.spec.template) },
  };
  delete start.status;
  if (previous.spec.replicas !== undefined) start.spec.replicas = previous.spec.replicas;
  const { canary, blueGreen } = next.spec.strategy;
  const services = [
    canary?.canaryService,
    canary?.stableService,
    blueGreen?.activeService,
    blueGreen?.previewService,
  ]
    .filter((service): service is string => service !== undefined && service !== '')
    .map((service) => ({ name: service, selector: {} }));
  const world = new InMemoryWorld({
    rollout: start,
    start: SIMULATION_START,
    behaviour: () => ({ kind: 'healthy', readyAfterMs: 0 }),
    analysisMs: 0,
    services,
  });
  const name = `${plan.namespace}/${plan.name}`;
  const fullyRolledOut = (): boolean => {
    const status = world.rollout.status;
    return (
      status?.phase === 'Healthy' &&
      status.stableRS !== undefined &&
      status.stableRS === status.currentPodHash &&
      String(status.observedGeneration ?? '') === String(world.rollout.metadata.generation ?? '')
    );
  };
  run(world, fullyRolledOut, name, () => undefined);

  // The change, as Git sync would apply it.
  world.rollout = {
    ...world.rollout,
    metadata: { ...world.rollout.metadata, generation: (world.rollout.metadata.generation ?? 1) + 1 },
    spec: structuredClone(next.spec),
  };
  const changedAt = world.now;
  const steps = (next.spec.strategy.canary?.steps ?? []) as CanaryStep[];
  const planned = new Map<number, PlannedStep>();
  const entry = (index: number): PlannedStep | undefined => {
    const step = steps[index];
    if (step === undefined) return undefined;
    let found = planned.get(index);
    if (found === undefined) {
      found = {
        index,
        action: describePlannedStep(step),
        canary: 0,
        stable: 0,
        weight: 0,
        analysisRuns: [],
        doneAfterMs: 0,
      };
      if (step.pause !== undefined) {
        if (step.pause.duration === undefined) found.untilPromoted = true;
        else found.pauseMs = parseDuration(step.pause.duration);
      }
      planned.set(index, found);
    }
    return found;
  };
  let doneSteps = 0;
  run(world, fullyRolledOut, name, (pass) => {
    const status = world.rollout.status ?? {};
    for (const action of pass.actions) {
      if (action.kind !== 'createAnalysisRun') continue;
      const stepLabel = action.labels[STEP_INDEX_LABEL];
      if (stepLabel === undefined) plan.backgroundAnalysisRuns.push(action.name);
      else entry(Number(stepLabel))?.analysisRuns.push(action.name);
    }
    const index = status.currentStepIndex ?? 0;
    // What the rollout looks like while it is at step `index`: the last pass there is the step's end state.
    const current = entry(index);
    if (current !== undefined) {
      const sets = [...world.sets.values()].map((set) => set.rs);
      current.canary = sets.find((rs) => rs.podTemplateHash === plan.podTemplateHash.after)?.replicas ?? 0;
      current.stable =
        status.stableRS === plan.podTemplateHash.after
          ? 0
          : (sets.find((rs) => rs.podTemplateHash === status.stableRS)?.replicas ?? 0);
      current.weight = status.canary?.weights?.canary.weight ?? world.trafficWeight;
    }
    // A step is done when the index first moves past it (all of them at full promotion).
    const passed = fullyRolledOut() ? steps.length : Math.min(index, steps.length);
    for (; doneSteps < passed; doneSteps++) {
      const step = entry(doneSteps);
      if (step !== undefined) step.doneAfterMs = world.now - changedAt;
    }
    // An indefinite pause (or an inconclusive analysis) waits for a human: promote at once, as `rollgate promote`
    // does (pause conditions cleared, controllerPause kept: that is how the planner tells a promote).
    const waiting = (status.pauseConditions ?? []).some(
      (condition) =>
        condition.reason === INCONCLUSIVE_ANALYSIS_RUN ||
        (condition.reason === 'CanaryPauseStep' && steps[index]?.pause?.duration === undefined) ||
        (condition.reason === 'BlueGreenPause' &&
          next.spec.strategy.blueGreen?.autoPromotionSeconds === undefined),
    );
    if (waiting) {
      world.patchStatus({ pauseConditions: null });
      plan.manualPromotions += 1;
    }
  });
  plan.steps = [...planned.values()].sort((a, b) => a.index - b.index);
  plan.minPromotionMs = world.now - changedAt;
  return plan;
}

/** Reconciles pass by pass until `done`, letting fake time pass to each requeue when a pass wrote nothing. */
function run(
  world: InMemoryWorld,
  done: () => boolean,
  name: string,
  afterPass: (pass: RolloutPlan) => void,
): void {
  const end = world.now + MAX_SIMULATED_MS;
  for (let passes = 0; passes < MAX_PASSES && world.now <= end; passes++) {
    const pass = world.reconcile();
    afterPass(pass);
    if (done()) return;
    // A pass that moved the status (a step index, a condition) is followed at once, as its own write wakes the queue.
    // Only writes that changed something count, as in the executor: a pass at rest holds its traffic
    // weights and writes nothing.
    const { changed, statusChanged, refused } = world.lastPass;
    const wrote = changed > 0 || statusChanged || refused;
    if (!wrote) world.advance(Math.max(pass.requeueAfterMs ?? IDLE_TICK_MS, 1));
  }
  throw new PlanSimulationError(name, world.rollout.status);
}
