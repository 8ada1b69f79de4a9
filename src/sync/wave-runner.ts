// The shell of an ordered sync: carries out each step the wave planner gives, reads what it waits for when told, waits on the clock.
import type { Clock } from '../clock/clock.ts';
import { waitUntil } from '../clock/wait-until.ts';
import type { LiveObject, ObjectHealth } from '../health/object-health.ts';
import { KubeApiError } from '../kube/errors.ts';
import type { Logger } from '../log/logger.ts';
import { hookStateOf, type HookState } from './hook-state.ts';
import { preparedRefOf, type ObjectApplier, type ObjectRef } from './object-applier.ts';
import { DEFAULT_APPLY_CONCURRENCY, runPlan } from './plan-runner.ts';
import type { ManifestChange } from '../git/manifest-diff.ts';
import type { ManifestProblem } from '../git/manifest-parser.ts';
import {
  actionSubject,
  knownToDiffer,
  type ActionOutcome,
  type ExecutedPhase,
  type SyncAction,
  type SyncContext,
} from './plan-sync.ts';
import { holdTargetOf } from './prune-hold.ts';
import {
  awaitedOf,
  hooksToDelete,
  needsOrder,
  nextStepMove,
  planOrderedSync,
  wasHook,
  type HookRun,
  type StepObservation,
  type StepProgress,
  type StepRun,
  type WaveStep,
} from './plan-waves.ts';

/** What the steps' shell needs: the applier (reads, hooks), the clock it waits on, and the health rules. */
export interface WaveRunnerDeps {
  applier: ObjectApplier;
  clock: Clock;
  logger: Logger;
  /** A live object's health (src/health's healthOf); undefined: not in the cluster. */
  healthOf: (live: LiveObject | undefined) => ObjectHealth;
  timeoutMs: number;
  concurrency?: number;
  /** Carries out one Sync action as a sync without waves does (source-sync's carryOut). */
  carry: (action: SyncAction) => Promise<ActionOutcome | undefined>;
  commit: string;
  author?: { name: string; email: string };
}

/** One hook as it ran: its key, the live name it got, and how it ended. */
export interface HookReport {
  key: string;
  phase: WaveStep['phase'];
  name?: string;
  state: HookState['state'] | 'not created';
  message?: string;
}

/** What a list of steps did: the executed Sync phases (for settleSync), the hooks, and the failure if any. */
export interface StepsOutcome {
  executed: ExecutedPhase[];
  hooks: HookReport[];
  failed?: { reason: string };
}

const EMPTY: StepObservation = { health: new Map(), hooks: new Map() };

/** The live identity of an applied object from its inventory key (`group/Kind/namespace/name`) and its manifest. */
function refOfApplied(key: string, desired: { apiVersion: string }, applied: string): ObjectRef {
  const [group = '', kind = '', namespace = '', ...name] = key.split('/');
  const desiredGroup = desired.apiVersion.includes('/') ? desired.apiVersion.split('/')[0] : '';
  const apiVersion = desiredGroup === group ? desired.apiVersion : applied;
  return { apiVersion, kind, name: name.join('/'), ...(namespace ? { namespace } : {}) };
}

/**
 * Runs `steps` in order (nextStepMove decides): each step's resources through `carry` in planApply's
 * order, its hooks created (a named hook's earlier run deleted first); then, while the step awaits
 * something, reads exactly that (health of what it applied when it settles, its hooks' runs) at the
 * moments the planner names. Hooks whose run ended are deleted by their delete policies. Never throws
 * for a failed step: the outcome says why.
 */
export async function runSteps(steps: readonly WaveStep[], deps: WaveRunnerDeps): Promise<StepsOutcome> {
  const outcome: StepsOutcome = { executed: [], hooks: [] };
  const refs = new Map<string, ObjectRef>();
  // Hooks whose creation was refused, by key: read as failed.
  const refused = new Map<string, string>();
  let progress: StepProgress = { step: 0 };
  let observed = EMPTY;
  for (;;) {
    const move = nextStepMove(steps, progress, observed, deps.clock.now(), deps.timeoutMs);
    const current = steps[progress.step];
    if (move.move === 'done' || move.move === 'failed') {
      if (current && progress.run) await cleanUpHooks(deps, current.hooks, observed.hooks, refs, outcome);
      if (move.move === 'failed') {
        outcome.failed = { reason: move.reason };
        deps.logger.warn({ reason: move.reason }, 'ordered sync failed');
      }
      return outcome;
    }
    if (move.move === 'wait') {
      await waitUntil(deps.clock, move.until);
      observed = await observe(
        deps,
        steps[progress.step] as WaveStep,
        progress.run as StepRun,
        refs,
        refused,
      );
      continue;
    }
    if (current && progress.run && move.step !== progress.step)
      await cleanUpHooks(deps, current.hooks, observed.hooks, refs, outcome);
    const step = steps[move.step] as WaveStep;
    deps.logger.info(
      { phase: step.phase, wave: step.wave, objects: step.apply.actions.length, hooks: step.hooks.length },
      'sync step started',
    );
    const run = await carryStep(deps, step, { refs, refused }, outcome);
    progress = { step: move.step, run };
    const awaited = awaitedOf(step, run);
    // Nothing to wait for: nothing is read.
    observed =
      awaited.health.length === 0 && awaited.hooks.length === 0
        ? EMPTY
        : await observe(deps, step, run, refs, refused);
  }
}

/** Applies a step's resources, creates its hooks; what it started, as the planner reads it. */
async function carryStep(
  deps: WaveRunnerDeps,
  step: WaveStep,
  known: { refs: Map<string, ObjectRef>; refused: Map<string, string> },
  outcome: StepsOutcome,
): Promise<StepRun> {
  const { refs, refused } = known;
  const startedAt = deps.clock.now();
  const applied: string[] = [];
  if (step.apply.actions.length > 0) {
    const phase = step.apply;
    const outcomes: Array<ActionOutcome | undefined> = phase.actions.map(() => undefined);
    const subjects = phase.actions.map((a) => (a ? actionSubject(a) : undefined));
    await runPlan(phase.plan, deps.concurrency ?? DEFAULT_APPLY_CONCURRENCY, async (index) => {
      const action = phase.actions[index] as SyncAction;
      phase.actions[index] = undefined;
      const done = await deps.carry(action);
      outcomes[index] = done;
      if (done && 'done' in done && done.done === 'applied' && done.inventoryKey !== undefined) {
        if (action.kind === 'applyObject') {
          refs.set(
            done.inventoryKey,
            refOfApplied(done.inventoryKey, action.desired, deps.applier.rolloutApiVersion),
          );
          applied.push(done.inventoryKey);
        }
      }
    });
    outcome.executed.push({ phase, actions: subjects, outcomes });
  }
  const hooks: string[] = [];
  for (const hook of step.hooks) {
    const report: HookReport = { key: hook.key, phase: step.phase, state: 'not created' };
    outcome.hooks.push(report);
    try {
      const prepared = await deps.applier.prepare(hook.desired, deps.commit, deps.author);
      const ref = preparedRefOf(prepared);
      // A named hook runs anew: the earlier run (this source's) goes first, whatever its delete policy.
      if (hook.desired.name !== undefined) await deps.applier.deleteHook(ref);
      const { name } = await createHook(deps, prepared);
      refs.set(hook.key, { ...ref, name });
      report.name = name;
      report.state = 'running';
      hooks.push(hook.key);
      deps.logger.info({ hook: hook.key, name, phase: step.phase }, 'hook created');
    } catch (err) {
      // A hook that cannot be created fails its step at once (the planner sees it failed).
      report.message = (err as Error).message;
      refs.delete(hook.key);
      hooks.push(hook.key);
      refused.set(hook.key, `could not be created: ${(err as Error).message}`);
    }
  }
  return { startedAt, applied, hooks };
}

/** Creates a hook, once more after a short wait when its earlier run is still being deleted (409). */
async function createHook(
  deps: WaveRunnerDeps,
  prepared: Record<string, unknown>,
): Promise<{ name: string }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.applier.createHook(prepared);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.status !== 409 || attempt >= 5) throw err;
      await waitUntil(deps.clock, new Date(deps.clock.now().getTime() + 1000));
    }
  }
}

/** Reads what the planner awaits for the step, and nothing else. */
async function observe(
  deps: WaveRunnerDeps,
  step: WaveStep,
  run: StepRun,
  refs: ReadonlyMap<string, ObjectRef>,
  refused: Map<string, string>,
): Promise<StepObservation> {
  const awaited = awaitedOf(step, run);
  const health = new Map<string, ObjectHealth>();
  const hooks = new Map<string, HookState>();
  const read = async (key: string): Promise<LiveObject | undefined> => {
    const ref = refs.get(key);
    return ref === undefined ? undefined : deps.applier.read(ref);
  };
  await Promise.all([
    ...awaited.health.map(async (key) => {
      try {
        health.set(key, deps.healthOf(await read(key)));
      } catch (err) {
        health.set(key, { status: 'Unknown', message: `could not be read: ${(err as Error).message}` });
      }
    }),
    ...awaited.hooks.map(async (key) => {
      const why = refused.get(key);
      if (why !== undefined) {
        hooks.set(key, { state: 'failed', message: why });
        return;
      }
      try {
        hooks.set(key, hookStateOf(await read(key)));
      } catch (err) {
        hooks.set(key, { state: 'running', message: `could not be read: ${(err as Error).message}` });
      }
    }),
  ]);
  return { health, hooks };
}

/** Records how each hook of a finished step ended and deletes those its delete policy names. */
async function cleanUpHooks(
  deps: WaveRunnerDeps,
  hooks: readonly HookRun[],
  states: ReadonlyMap<string, HookState>,
  refs: ReadonlyMap<string, ObjectRef>,
  outcome: StepsOutcome,
): Promise<void> {
  for (const hook of hooks) {
    const state = states.get(hook.key);
    const report = outcome.hooks.find((r) => r.key === hook.key && r.state !== 'not created');
    if (report && state) {
      report.state = state.state;
      if (state.state !== 'succeeded') report.message = state.message;
    }
  }
  for (const key of hooksToDelete(hooks, states)) {
    const ref = refs.get(key);
    if (!ref) continue;
    try {
      await deps.applier.deleteHook(ref);
    } catch (err) {
      deps.logger.warn({ hook: key, err: (err as Error).message }, 'could not delete a finished hook');
    }
  }
}

type Upsert = Exclude<ManifestChange, { change: 'removed' }>;
type Removal = Extract<ManifestChange, { change: 'removed' }>;

/** What the part of a commit written before the ordered sync took over left to prune (planSyncPart's). */
export interface PartPlan {
  removals: Removal[];
  present: string[];
}

/** What an ordered sync did besides its executed phases (which go to settleSync with the others). */
export interface OrderedRun {
  /** Objects skipped for a bad sync-wave annotation (they join the diff's problems). */
  problems: ManifestProblem[];
  hooks: HookReport[];
  /** Why the sync failed for good: a hook failed, a step timed out, a hook annotation is bad. */
  failed?: string;
  /** Whether the commit orders its objects (the status's `ordered`). */
  ordered: boolean;
}

/** What runInOrder takes from syncSource. */
export interface InOrderContext {
  commit: string;
  author?: { name: string; email: string };
  context: SyncContext;
  /** Every object of the commit (an incremental diff misses the hooks of unchanged files); absent for a full diff. */
  tree: (() => Promise<{ changes: ManifestChange[] }>) | undefined;
  carry: (action: SyncAction) => Promise<ActionOutcome | undefined>;
  /** Where the executed Sync and Prune phases are collected, and the keys the Sync phases applied. */
  executed: ExecutedPhase[];
  appliedKeys: Set<string>;
  prune: (removals: Removal[], present: ReadonlySet<string>) => Promise<void>;
}

/**
 * An ordered sync (waves or hooks, plan-waves.ts): PreSync and Sync steps, the Prune phase, PostSync
 * steps; on a failure, the SyncFail hooks. A bad hook annotation stops it before anything is written.
 * `before`: a first part already written the usual way (its objects had no ordering annotation).
 */
export async function runInOrder(
  deps: Omit<WaveRunnerDeps, 'carry' | 'commit' | 'author'>,
  changes: readonly ManifestChange[],
  before: PartPlan | undefined,
  given: InOrderContext,
): Promise<OrderedRun> {
  const { context } = given;
  const upserts = changes.filter((c): c is Upsert => c.change !== 'removed');
  const removals = [
    ...(before?.removals ?? []),
    ...changes.filter((c): c is Removal => c.change === 'removed' && !wasHook(c)),
  ];
  const tree =
    given.tree === undefined
      ? undefined
      : (await given.tree()).changes.filter((c): c is Upsert => c.change !== 'removed');
  const plan = planOrderedSync(upserts, tree, {
    defaultNamespace: context.defaultNamespace,
    read: knownToDiffer(context) ? 'if-not-in-inventory' : 'always',
  });
  const run: OrderedRun = {
    problems: plan.problems.map((p) => ({ ...p, column: 1 })),
    hooks: [],
    ordered: needsOrder(tree ?? changes),
  };
  if (plan.refusedHooks.length > 0) {
    run.failed = plan.refusedHooks.map((p) => `${p.file}:${p.line}: ${p.message}`).join('; ');
    return run;
  }
  const runner: WaveRunnerDeps = {
    ...deps,
    carry: given.carry,
    commit: given.commit,
    ...(given.author ? { author: given.author } : {}),
  };
  const record = (outcome: StepsOutcome): void => {
    run.hooks.push(...outcome.hooks);
    for (const done of outcome.executed) {
      given.executed.push(done);
      for (const o of done.outcomes) if (o?.inventoryKey !== undefined) given.appliedKeys.add(o.inventoryKey);
    }
  };
  const main = await runSteps(plan.main, runner);
  record(main);
  let failed = main.failed?.reason;
  if (failed === undefined) {
    const present = new Set(before?.present ?? []);
    for (const c of upserts) {
      const target = holdTargetOf(c.object, context.defaultNamespace);
      if (target) present.add(target.key);
    }
    await given.prune(removals, present);
    const post = await runSteps(plan.post, runner);
    record(post);
    failed = post.failed?.reason;
  }
  if (failed !== undefined) {
    run.failed = failed;
    if (plan.syncFail.length > 0) {
      const syncFail = await runSteps(plan.syncFail, runner);
      record(syncFail);
      if (syncFail.failed) run.failed = `${failed} (and the SyncFail hooks: ${syncFail.failed.reason})`;
    }
  }
  return run;
}
