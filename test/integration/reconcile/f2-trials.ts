// F2's randomized property: revisions and aborts at random moments under 30 % injected 409s always converge. Shared by the default and slow suites.
import type { DrivenApi } from '../../../src/manifest/driven-api.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { abortRollout } from '../../../src/views/rollout-commands.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { ReconcileHarness, isFullyPromoted, testRollout, type JobResult } from './reconcile-harness.ts';

/** The sandbox's seeded generator (mulberry32) as a function: the same seed replays the same trial. */
function seededRandom(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

/** One scripted user action at a fake-time offset (ms from the trial's start). */
type ScriptEvent = { atMs: number; kind: 'revision' } | { atMs: number; kind: 'abort' };

interface TrialPlan {
  seed: number;
  replicas: number;
  script: ScriptEvent[];
}

interface TrialState {
  plan: TrialPlan;
  key: RolloutKey;
  revision: number;
  aborted: boolean;
  done: boolean;
  reconciles: number;
  /** Fake time (ms since epoch) at which the queue would run this rollout again. */
  dueAt: number;
}

export interface F2Result {
  trials: number;
  failures: string[];
  /** Most reconcile calls any trial needed to converge. */
  maxReconciles: number;
  conflicts: number;
  violations: string[];
  reconciles: number;
}

/** Bound on reconcile calls per trial: converging needs far fewer; more means it is stuck. */
export const MAX_RECONCILES_PER_TRIAL = 150;
const SCRIPT_WINDOW_MS = 8_000;

function planTrial(seed: number): TrialPlan {
  const random = seededRandom(seed);
  const int = (n: number): number => Math.floor(random() * n);
  const script: ScriptEvent[] = Array.from({ length: 1 + int(3) }, () => ({
    atMs: int(SCRIPT_WINDOW_MS),
    kind: 'revision' as const,
  }));
  if (random() < 0.3) script.push({ atMs: int(SCRIPT_WINDOW_MS), kind: 'abort' });
  script.sort((a, b) => a.atMs - b.atMs);
  return { seed, replicas: 1 + int(5), script };
}

function template(name: string, revision: number) {
  return {
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: `app:${revision}.0` }] },
    },
  };
}

/** The expected end: the newest revision promoted, or, after an abort mid-canary, aborted with the canary at 0. */
function converged(state: TrialState, observed: ObservedState): boolean {
  // An abort that arrives after the revision already completed has nothing left to abort.
  if (isFullyPromoted(observed)) return true;
  if (!state.aborted) return false;
  const status = observed.rollout.status ?? {};
  const canary = observed.replicaSets.find(
    (rs) => rs.podTemplateHash !== status.stableRS && rs.podTemplateHash === status.currentPodHash,
  );
  return (
    status.abort === true &&
    status.phase === 'Degraded' &&
    status.canary?.weights?.canary.weight === 0 &&
    (canary === undefined || (canary.replicas === 0 && canary.status.replicas === 0))
  );
}

async function withoutFaults<T>(harness: ReconcileHarness, action: () => Promise<T>): Promise<T> {
  // A user's kubectl retries its own conflicts; the injected faults are aimed at the reconciler.
  const rate = harness.sandbox.faults.conflictRate;
  harness.sandbox.faults.conflictRate = 0;
  try {
    return await action();
  } finally {
    harness.sandbox.faults.conflictRate = rate;
  }
}

function dueAfter(outcome: JobResult, now: number): number {
  if ('afterMs' in outcome) return now + Math.max(outcome.afterMs, 1);
  return Number.POSITIVE_INFINITY;
}

async function runBatch(
  planSeeds: number[],
  firstIndex: number,
  sandboxSeed: number,
  result: F2Result,
  api: DrivenApi | undefined,
): Promise<void> {
  const harness = await ReconcileHarness.start({
    seed: sandboxSeed,
    readyDelayMs: 1_000,
    ...(api ? { api } : {}),
  });
  try {
    const start = harness.clock.now().getTime();
    const states: TrialState[] = [];
    for (const [offset, seed] of planSeeds.entries()) {
      const plan = planTrial(seed);
      const object = testRollout({
        name: `f2-${firstIndex + offset}`,
        replicas: plan.replicas,
        image: 'app:0.0',
        steps: [{ setWeight: 50 }, { pause: { duration: '1s' } }],
        scaleDownDelaySeconds: 1,
        abortScaleDownDelaySeconds: 1,
      });
      const key = await harness.createRollout(object);
      states.push({ plan, key, revision: 0, aborted: false, done: false, reconciles: 0, dueAt: start });
    }
    harness.sandbox.faults.conflictRate = 0.3;
    for (;;) {
      const now = harness.clock.now().getTime();
      const active = states.filter((s) => !s.done && s.reconciles < MAX_RECONCILES_PER_TRIAL);
      if (active.length === 0) break;
      await Promise.all(
        active.map(async (state) => {
          const events = state.plan.script.filter((e) => start + e.atMs <= now);
          state.plan.script = state.plan.script.filter((e) => start + e.atMs > now);
          for (const event of events) {
            if (event.kind === 'revision') {
              state.revision += 1;
              state.aborted = false;
              await withoutFaults(harness, () =>
                harness.patchSpec(state.key, template(state.key.name, state.revision)),
              );
            } else if (state.revision > 0) {
              await withoutFaults(harness, () => abortRollout(harness.clients, state.key));
              state.aborted = true;
            }
          }
          // The queue runs a rollout when its requeue is due or when something about it changed.
          if (events.length === 0 && state.dueAt > now) return;
          const outcome = await harness.job(state.key, () => harness.reconcile(state.key, {}, false));
          state.reconciles += 1;
          state.dueAt = dueAfter(outcome, harness.clock.now().getTime());
          const observed = harness.lastObserved.get(`${state.key.namespace}/${state.key.name}`);
          if (observed && state.plan.script.length === 0 && converged(state, observed)) state.done = true;
          else if (state.dueAt === Number.POSITIVE_INFINITY && state.plan.script.length === 0)
            state.dueAt = harness.clock.now().getTime() + 5_000; // "done" but not converged: a resync will tell.
        }),
      );
      const pending = states.filter((s) => !s.done && s.reconciles < MAX_RECONCILES_PER_TRIAL);
      if (pending.length === 0) break;
      const next = Math.min(
        ...pending.map((s) =>
          Math.min(s.dueAt, s.plan.script[0] ? start + s.plan.script[0].atMs : Number.POSITIVE_INFINITY),
        ),
      );
      const step = Math.max(1, Math.min(next - harness.clock.now().getTime(), 5_000));
      await harness.sandbox.advance(step);
    }
    harness.sandbox.faults.conflictRate = 0;
    for (const state of states) {
      result.reconciles += state.reconciles;
      result.maxReconciles = Math.max(result.maxReconciles, state.reconciles);
      if (!state.done) {
        const observed = harness.lastObserved.get(`${state.key.namespace}/${state.key.name}`);
        result.failures.push(
          `trial seed ${state.plan.seed} (replicas ${state.plan.replicas}) did not converge in ${state.reconciles} reconciles: ${JSON.stringify(observed?.rollout.status)}`,
        );
      }
    }
    result.conflicts += harness.conflicts;
    result.violations.push(...harness.violations.map((v) => `${v.at} ${v.message}`));
  } finally {
    await harness.stop();
  }
}

/**
 * Runs `trials` randomized trials, `batch` rollouts per fresh sandbox, in one fake-time simulation per
 * batch: each rollout is reconciled when its requeue is due or when its script acts (a new revision,
 * an abort), with 30 % of the reconciler's API writes answered 409. Invariants are checked on every
 * state any pass read.
 */
export async function runF2Trials(options: {
  trials: number;
  seed: number;
  /**
   * The index of the first trial (default 0): trials `from` … `from + trials - 1` of the seed's sequence.
   * A multiple of the batch size, so they share a sandbox (and its seed) with the same trials as in a run
   * from 0: one sequence split between files replays the very same trials.
   */
  from?: number;
  batch?: number;
  /** The group the Rollouts live in and the passes drive (rollgate.dev by default). */
  api?: DrivenApi;
}): Promise<F2Result> {
  const result: F2Result = {
    trials: options.trials,
    failures: [],
    maxReconciles: 0,
    conflicts: 0,
    violations: [],
    reconciles: 0,
  };
  // Small sandboxes: the sandbox's cost per request grows with the objects it holds.
  const batch = options.batch ?? 4;
  const from = options.from ?? 0;
  if (from % batch !== 0) throw new Error(`from (${from}) must be a multiple of the batch size (${batch})`);
  const end = from + options.trials;
  for (let first = from; first < end; first += batch) {
    const seeds: number[] = [];
    for (let i = first; i < Math.min(end, first + batch); i += 1) seeds.push(options.seed * 100_003 + i);
    await runBatch(seeds, first, options.seed + first, result, options.api);
  }
  return result;
}

/**
 * Runs trials `from` … `from + trials - 1` of the seed's sequence in one sandbox seeded `sandboxSeed`:
 * replays a batch a run with another split once made (the sandbox's seed decides which writes get 409),
 * such as a failure found that way.
 */
export async function runF2Batch(options: {
  seed: number;
  from: number;
  trials: number;
  sandboxSeed: number;
  api?: DrivenApi;
}): Promise<F2Result> {
  const result: F2Result = {
    trials: options.trials,
    failures: [],
    maxReconciles: 0,
    conflicts: 0,
    violations: [],
    reconciles: 0,
  };
  const seeds = Array.from({ length: options.trials }, (_, i) => options.seed * 100_003 + options.from + i);
  await runBatch(seeds, options.from, options.sandboxSeed, result, options.api);
  return result;
}
