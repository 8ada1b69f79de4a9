// The ordered sync's planner: a commit's objects and hooks → steps (PreSync, Sync waves, PostSync, SyncFail) as data, and the pure verdict on a running step.
import type { ManifestChange } from '../git/manifest-diff.ts';
import type { ObjectHealth } from '../health/object-health.ts';
import { planApply, type PlannedObject } from './apply-plan.ts';
import type { HookState } from './hook-state.ts';
import type { DesiredObject } from './object-applier.ts';
import {
  desiredOf,
  type StatusWrite,
  type SyncAction,
  type SyncPhase,
  type SyncProblem,
} from './plan-sync.ts';
import { asksForOrder, syncOrderOf, type HookDeletePolicy, type HookType } from './sync-order.ts';

type Upsert = Exclude<ManifestChange, { change: 'removed' }>;

/** How long a step waits between two looks at what it waits for (Argo CD's delay between waves). */
export const WAVE_LOOK_INTERVAL_MS = 2000;

/** A source's `syncTimeout` when it sets none: how long one step (a wave or a phase's hooks) may take. */
export const DEFAULT_SYNC_TIMEOUT_MS = 5 * 60_000;

/** One hook of the commit, as a step runs it. */
export interface HookRun {
  /** The manifest key (`kind/namespace/name`, or `…/generateName#digest`). */
  key: string;
  desired: DesiredObject;
  type: HookType;
  wave: number;
  deletePolicies: HookDeletePolicy[];
}

/** The steps' phases, in the order they run; `SyncFail` only when the sync failed. */
export type WavePhase = 'PreSync' | 'Sync' | 'PostSync' | 'SyncFail';

/**
 * One step of an ordered sync: a phase's wave. Its resources are applied (Sync phase only) and its
 * hooks created together; the step is over once every hook finished and, when `settle`, every object
 * it applied is Healthy (a later step exists: a wave waits for the one before it; the last step waits
 * for nothing, as a sync without waves waits for nothing).
 */
export interface WaveStep {
  phase: WavePhase;
  wave: number;
  /** The resources of this wave in planApply's order (Sync phase; none for the hook-only phases). */
  apply: SyncPhase;
  hooks: HookRun[];
  settle: boolean;
}

/** What an ordered sync runs. */
export interface OrderedSync {
  /** PreSync and Sync steps, in order; the Prune phase runs after them. */
  main: WaveStep[];
  /** PostSync steps, run once main and Prune are done. */
  post: WaveStep[];
  /** SyncFail steps, run when the sync failed. */
  syncFail: WaveStep[];
  /** Objects skipped for a bad annotation (the others proceed). */
  problems: SyncProblem[];
  /** Hooks with a bad annotation: the sync stops before anything is applied (see docs/sync.md). */
  refusedHooks: SyncProblem[];
  /** Keys of the commit's hooks and skipped objects: they are neither applied, inventoried nor pruned. */
  notApplied: Set<string>;
}

const PHASES: readonly WavePhase[] = ['PreSync', 'Sync', 'PostSync', 'SyncFail'];

function plannedOf(change: Upsert): PlannedObject {
  const o = change.object;
  return {
    key: change.key,
    apiVersion: o.apiVersion,
    kind: o.kind,
    object: o.object,
    ...(o.namespace ? { namespace: o.namespace } : {}),
    ...(o.name !== undefined ? { name: o.name } : {}),
  };
}

/** Argo CD's order inside a wave for hooks: kind, then name (Rollgate's own order applies to resources). */
const byKindThenName = (a: HookRun, b: HookRun): number =>
  a.desired.kind.localeCompare(b.desired.kind) || a.key.localeCompare(b.key);

/**
 * Plans an ordered sync. `upserts`: the objects the diff adds or changes (what is applied, as in a sync
 * without waves: only changed objects reach the cluster). `tree`: every object of the commit when it was
 * read whole (an incremental diff does not show the hooks of unchanged files, and hooks run on every sync
 * of a new commit); without it the hooks are those of `upserts` (a full diff holds them all).
 *
 * Steps run in Argo CD's order: phase, then wave; inside a wave, resources in planApply's order (its
 * Namespaces and CRDs before what needs them) and hooks by kind then name.
 */
export function planOrderedSync(
  upserts: readonly Upsert[],
  tree: readonly Upsert[] | undefined,
  context: { defaultNamespace: string; read: 'always' | 'if-not-in-inventory' },
): OrderedSync {
  const problems: SyncProblem[] = [];
  const refusedHooks: SyncProblem[] = [];
  const notApplied = new Set<string>();
  const resources = new Map<number, Upsert[]>();
  const hooks = new Map<string, HookRun[]>();
  const slot = <T>(map: Map<T, unknown[]>, at: T): unknown[] => {
    let list = map.get(at);
    if (!list) map.set(at, (list = []));
    return list;
  };
  for (const change of upserts) {
    const order = syncOrderOf(change.object.object);
    const where = { key: change.key, file: change.file, line: change.line };
    if (order.role === 'resource') (slot(resources, order.wave) as Upsert[]).push(change);
    else {
      notApplied.add(change.key);
      if (order.role === 'invalid')
        (order.hook ? refusedHooks : problems).push({
          ...where,
          message: order.hook
            ? `${order.message}; the sync stops until the hook is fixed`
            : `${order.message}; object skipped`,
        });
    }
  }
  const seen = new Set<string>();
  for (const change of tree ?? upserts) {
    if (seen.has(change.key)) continue;
    seen.add(change.key);
    const order = syncOrderOf(change.object.object);
    if (order.role === 'skip' || order.role === 'hook') notApplied.add(change.key);
    if (order.role === 'invalid' && order.hook && !refusedHooks.some((p) => p.key === change.key)) {
      notApplied.add(change.key);
      refusedHooks.push({
        key: change.key,
        file: change.file,
        line: change.line,
        message: `${order.message}; the sync stops until the hook is fixed`,
      });
    }
    if (order.role !== 'hook') continue;
    for (const type of order.types)
      (slot(hooks, `${type}/${order.wave}`) as HookRun[]).push({
        key: change.key,
        desired: desiredOf(change),
        type,
        wave: order.wave,
        deletePolicies: order.deletePolicies,
      });
  }
  const steps: WaveStep[] = [];
  for (const phase of PHASES) {
    const waves = new Set<number>();
    if (phase === 'Sync') for (const wave of resources.keys()) waves.add(wave);
    for (const at of hooks.keys())
      if (at.startsWith(`${phase}/`)) waves.add(Number(at.slice(phase.length + 1)));
    for (const wave of [...waves].sort((a, b) => a - b)) {
      const applied = phase === 'Sync' ? (resources.get(wave) ?? []) : [];
      const actions = applied.map((c): SyncAction => {
        const desired = desiredOf(c);
        if (desired.name === undefined) return { kind: 'createGenerated', desired };
        return {
          kind: 'applyObject',
          desired,
          read: context.read,
          changed: c.change === 'changed',
          enqueueReconcile: desired.kind === 'Rollout',
        };
      });
      steps.push({
        phase,
        wave,
        apply: {
          name: 'Sync',
          part: 'all',
          actions,
          plan: planApply(applied.map(plannedOf), { defaultNamespace: context.defaultNamespace }),
        },
        hooks: [...(hooks.get(`${phase}/${wave}`) ?? [])].sort(byKindThenName),
        settle: false,
      });
    }
  }
  const main = steps.filter((s) => s.phase === 'PreSync' || s.phase === 'Sync');
  const post = steps.filter((s) => s.phase === 'PostSync');
  const syncFail = steps.filter((s) => s.phase === 'SyncFail');
  // Every step but the last of the sync waits for health before the next one (PostSync included: it
  // runs once everything is healthy); SyncFail steps wait only for their hooks.
  const ordered = [...main, ...post];
  ordered.forEach((step, i) => (step.settle = i < ordered.length - 1));
  return { main, post, syncFail, problems, refusedHooks, notApplied };
}

/** What a step carried out: when, the inventory keys of the objects it applied, and the hooks it created. */
export interface StepRun {
  startedAt: Date;
  applied: readonly string[];
  hooks: readonly string[];
}

/** What the shell read for a running step, by key: the applied objects' health, the hooks' runs. */
export interface StepObservation {
  health: ReadonlyMap<string, ObjectHealth>;
  hooks: ReadonlyMap<string, HookState>;
}

/** What the shell must read before {@link judgeStep} can decide: nothing at all when the step awaits nothing. */
export function awaitedOf(
  step: Pick<WaveStep, 'settle'>,
  run: StepRun,
): { health: string[]; hooks: string[] } {
  return { health: step.settle ? [...run.applied] : [], hooks: [...run.hooks] };
}

export type StepVerdict =
  | { verdict: 'done' }
  | { verdict: 'wait'; until: Date; waitingFor: string[] }
  | { verdict: 'failed'; reason: string };

const stepName = (step: Pick<WaveStep, 'phase' | 'wave'>): string =>
  step.phase === 'Sync' ? `sync-wave ${step.wave}` : `${step.phase} hooks (wave ${step.wave})`;

const formatMs = (ms: number): string =>
  ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;

/**
 * The verdict on a running step, from what was read: failed as soon as one of its hooks failed, done once
 * every hook succeeded and (when it settles) every applied object is Healthy, else wait (the next look
 * {@link WAVE_LOOK_INTERVAL_MS} from now) until `timeoutMs` after the step started, then failed naming
 * what it still waited for.
 */
export function judgeStep(
  step: Pick<WaveStep, 'phase' | 'wave' | 'settle'>,
  run: StepRun,
  observed: StepObservation,
  now: Date,
  timeoutMs: number,
): StepVerdict {
  const awaited = awaitedOf(step, run);
  const waitingFor: string[] = [];
  for (const key of awaited.hooks) {
    const state = observed.hooks.get(key) ?? { state: 'running', message: 'not read' };
    if (state.state === 'failed')
      return { verdict: 'failed', reason: `${step.phase} hook ${key} failed: ${state.message}` };
    if (state.state === 'running') waitingFor.push(`hook ${key} (${state.message})`);
  }
  for (const key of awaited.health) {
    const health = observed.health.get(key) ?? { status: 'Unknown', message: 'not read' };
    if (health.status !== 'Healthy')
      waitingFor.push(`${key} (${health.status}${health.message ? `: ${health.message}` : ''})`);
  }
  if (waitingFor.length === 0) return { verdict: 'done' };
  const deadline = run.startedAt.getTime() + timeoutMs;
  if (now.getTime() >= deadline)
    return {
      verdict: 'failed',
      reason: `${stepName(step)} did not finish within the sync timeout (${formatMs(timeoutMs)}): waiting for ${waitingFor.join(', ')}`,
    };
  return {
    verdict: 'wait',
    until: new Date(Math.min(now.getTime() + WAVE_LOOK_INTERVAL_MS, deadline)),
    waitingFor,
  };
}

/** Where an ordered run of steps is: the step it is at, and what that step carried out (once it ran). */
export interface StepProgress {
  step: number;
  run?: StepRun;
}

export type StepMove =
  | { move: 'run'; step: number }
  | { move: 'wait'; until: Date; waitingFor: string[] }
  | { move: 'failed'; step: number; reason: string }
  | { move: 'done' };

/**
 * The next move through a list of steps: run the current step when it has not run, else the verdict on
 * it (done → run the next one, or done after the last).
 */
export function nextStepMove(
  steps: ReadonlyArray<Pick<WaveStep, 'phase' | 'wave' | 'settle'>>,
  progress: StepProgress,
  observed: StepObservation,
  now: Date,
  timeoutMs: number,
): StepMove {
  const step = steps[progress.step];
  if (step === undefined) return { move: 'done' };
  if (progress.run === undefined) return { move: 'run', step: progress.step };
  const verdict = judgeStep(step, progress.run, observed, now, timeoutMs);
  switch (verdict.verdict) {
    case 'failed':
      return { move: 'failed', step: progress.step, reason: verdict.reason };
    case 'wait':
      return { move: 'wait', until: verdict.until, waitingFor: verdict.waitingFor };
    case 'done':
      return progress.step + 1 < steps.length ? { move: 'run', step: progress.step + 1 } : { move: 'done' };
  }
}

/** The hooks to delete once their run ended, by their delete policies (HookSucceeded, HookFailed). */
export function hooksToDelete(
  hooks: ReadonlyArray<Pick<HookRun, 'key' | 'deletePolicies'>>,
  states: ReadonlyMap<string, HookState>,
): string[] {
  return hooks
    .filter((hook) => {
      const state = states.get(hook.key)?.state;
      return (
        (state === 'succeeded' && hook.deletePolicies.includes('HookSucceeded')) ||
        (state === 'failed' && hook.deletePolicies.includes('HookFailed'))
      );
    })
    .map((hook) => hook.key);
}

/** Whether a sync must take the ordered path: any object of it asks for order, or the source's last commit did. */
export function needsOrder(changes: readonly ManifestChange[]): boolean {
  return changes.some((c) => c.change !== 'removed' && asksForOrder(syncOrderOf(c.object.object)));
}

/** Whether a removed object was a hook or skipped: it was never the source's, so it is never pruned. */
export function wasHook(change: Extract<ManifestChange, { change: 'removed' }>): boolean {
  const order = syncOrderOf(change.previous.object);
  return order.role === 'hook' || order.role === 'skip' || (order.role === 'invalid' && order.hook);
}

/**
 * The status write of an ordered sync, from settleSync's: Failed and halted at `commit` when it failed
 * for good (the inventory keeps what it wrote before failing); else settleSync's, marked `ordered` when the
 * commit orders its objects. A retry settleSync asked for (a transient cluster error) stays a retry.
 */
export function orderedStatus(
  settled: StatusWrite,
  run: { failed?: string; ordered: boolean },
  commit: string,
  attemptAt: string,
): StatusWrite {
  if (run.failed !== undefined) {
    const reason = run.failed;
    return {
      write: 'failed',
      failure: {
        message: `sync of ${commit.slice(0, 12)} failed: ${reason}`,
        attemptAt,
        halted: { commit, reason },
      },
      ...(settled.write === 'synced' || settled.write === 'failed'
        ? settled.inventory !== undefined
          ? { inventory: settled.inventory }
          : {}
        : {}),
    };
  }
  if (settled.write !== 'synced' || !run.ordered) return settled;
  return { ...settled, status: { ...settled.status, ordered: true } };
}
