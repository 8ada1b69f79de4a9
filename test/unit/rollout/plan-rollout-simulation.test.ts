// Whole-planner simulation: an in-memory world driven by planRollout with a fake clock, invariants every pass.
import { isDeepStrictEqual } from 'node:util';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { describe, it, expect } from 'vitest';
import type { CanaryStep } from '../../../src/manifest/rollout.ts';
import { resolveReplicaBudget } from '../../../src/rollout/index.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import { InMemoryWorld } from '../../builders/in-memory-world.ts';
import { followsAtOnce } from '../../builders/run-until.ts';

/** The sandbox's seeded generator (mulberry32) as a function: the same seed replays the same trial. */
function prng(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

const STEP_SETS: CanaryStep[][] = [
  [],
  [{ setWeight: 25 }, { pause: { duration: '10s' } }, { setWeight: 50 }, { pause: {} }, { setWeight: 75 }],
  [{ setWeight: 20 }, { analysis: { templates: [{ templateName: 'ok' }] } }, { pause: { duration: 5 } }],
  [
    { setCanaryScale: { replicas: 1 } },
    { setWeight: 50 },
    { pause: {} },
    { setCanaryScale: { matchTrafficWeight: true } },
  ],
];

interface TrialResult {
  passes: number;
  converged: boolean;
}

interface TrialOptions {
  /** Share of writes (actions and status) refused like a 409, stopping the pass. */
  conflictRate?: number;
  /** Users abort at random moments and retry a little later. */
  aborts?: boolean;
  /** Users restart (spec.restartAt = now) at random moments, also mid-canary and mid-restart. */
  restarts?: boolean;
}

/**
 * Runs `assert` (an expect) only when `holds` is false. A run of these trials checks its invariants some
 * 10^5 times, and vitest's expect was a quarter of the file's time: a check that holds costs nothing, one
 * that fails still fails through expect, with its message and diff.
 */
function check(holds: boolean, assert: () => void): void {
  if (!holds) assert();
}

/** Runs one randomized trial and asserts the invariants after every reconcile. */
function trial(seed: number, options: TrialOptions = {}): TrialResult {
  const random = prng(seed);
  const faults = prng(seed * 7919);
  // Its own sequence, so the other trials replay exactly as before.
  const restarts = prng(seed * 31337);
  let restartAt: string | undefined;
  const replicas = 1 + Math.floor(random() * 5);
  const steps = STEP_SETS[Math.floor(random() * STEP_SETS.length)] ?? [];
  const background = random() < 0.3;
  const budgets: Array<[number | string, number | string]> = [
    ['25%', '25%'],
    [1, 0],
    [0, 1],
    ['50%', '0%'],
  ];
  const [maxSurge, maxUnavailable] = budgets[Math.floor(random() * budgets.length)] ?? ['25%', '25%'];
  const rollout = aRollout()
    .withReplicas(replicas)
    .withSteps(...steps)
    .withCanary({
      scaleDownDelaySeconds: Math.floor(random() * 10),
      maxSurge,
      maxUnavailable,
      canaryService: 'web-canary',
      stableService: 'web-stable',
      ...(background ? { analysis: { templates: [{ templateName: 'bg' }], startingStep: 1 } } : {}),
    })
    .build();
  const readyAfterMs = 1000 + Math.floor(random() * 3000);
  const world = new InMemoryWorld({
    rollout,
    behaviour: () => ({ kind: 'healthy', readyAfterMs }),
    fail: () => faults() < (options.conflictRate ?? 0),
    services: [
      { name: 'web-canary', selector: { app: 'web' } },
      { name: 'web-stable', selector: { app: 'web' } },
    ],
  });
  const budget = resolveReplicaBudget(replicas, maxSurge, maxUnavailable);
  const ceiling = replicas + budget.maxSurge;
  const floor = replicas - budget.maxUnavailable;
  let version = 1;
  const revisions = 1 + Math.floor(random() * 4);
  const everStable = new Set<string>();
  let passes = 0;

  for (; passes < 3000; passes++) {
    const before = world.totals();
    const conflictsBefore = world.conflicts;
    const plan = world.reconcile();
    const after = world.totals();
    const status = world.rollout.status ?? {};
    // A revision the planner made stable (even if that status write was refused) is not a canary.
    if (status.stableRS !== undefined) everStable.add(status.stableRS);
    if (plan.status.stableRS !== undefined) everStable.add(plan.status.stableRS);
    const context = `seed ${seed} pass ${passes} R=${replicas}`;
    const most = Math.max(ceiling, before.pods);
    check(after.pods <= most, () =>
      expect(after.pods, `${context}: pods above replicas + maxSurge`).toBeLessThanOrEqual(most),
    );
    // A restart with maxUnavailable 0 still replaces one pod at a time (as Argo Rollouts).
    const restartFloor =
      restartAt !== undefined && budget.maxUnavailable === 0 ? Math.max(0, floor - 1) : floor;
    if (before.available >= floor) {
      check(after.available >= restartFloor, () =>
        expect(
          after.available,
          `${context}: available below replicas - maxUnavailable`,
        ).toBeGreaterThanOrEqual(restartFloor),
      );
    }
    // Before any revision is recorded stable there is no canary (the first deploy may itself be replaced).
    const canariesWithPods =
      status.stableRS === undefined ? [] : world.hashesWithPods().filter((hash) => !everStable.has(hash));
    check(canariesWithPods.length <= 1, () =>
      expect(canariesWithPods.length, `${context}: more than one canary with pods`).toBeLessThanOrEqual(1),
    );
    for (const value of world.deadlineAnnotations())
      check(value !== '', () => expect(value, `${context}: empty deadline`).not.toBe(''));
    const invalid = plan.status.conditions?.find((c) => c.type === 'InvalidSpec');
    check(invalid === undefined, () => expect(invalid, context).toBeUndefined());

    // The outside world: new revisions at random moments, promotes of indefinite pauses.
    if (version < revisions && random() < 0.04) {
      version += 1;
      world.setImage(`app:${version}`);
      continue;
    }
    if ((status.pauseConditions ?? []).length > 0 && random() < 0.1) {
      world.patchStatus({ pauseConditions: null });
      continue;
    }
    if (
      options.aborts === true &&
      status.stableRS !== status.currentPodHash &&
      status.abort !== true &&
      random() < 0.02
    ) {
      world.patchStatus({ abort: true });
      continue;
    }
    if (options.restarts === true && restarts() < 0.03) {
      restartAt = new Date(world.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      world.patchSpec({ restartAt });
      continue;
    }
    if (status.abort === true && status.phase === 'Degraded' && random() < 0.05) {
      world.patchStatus({ abort: false });
      continue;
    }
    const latest = hashOf(`app:${version}`);
    const done =
      version === revisions &&
      status.stableRS === latest &&
      status.phase === 'Healthy' &&
      world.hashesWithPods().every((hash) => hash === latest) &&
      (restartAt === undefined || status.restartedAt === restartAt);
    if (done) return { passes, converged: true };
    const wrote = followsAtOnce(world) || plan.requeueAfterMs === 0;
    if (!wrote && world.conflicts === conflictsBefore) {
      // Nothing to do: planning again at the same moment must change nothing (a no-op pass writes nothing;
      // with a router it may only hold the recorded weights, which the router already has).
      const again = world.reconcile();
      const writes = again.actions.filter(
        (a) => a.kind !== 'emitEvent' && a.kind !== 'reassertTrafficWeights',
      );
      check(writes.length === 0, () => expect(writes, `${context}: no-op pass wrote`).toEqual([]));
      check(world.lastPass.changed === 0, () =>
        expect(world.lastPass.changed, `${context}: no-op pass changed the world`).toBe(0),
      );
      // Strictly equal is also equal to toEqual; only a difference needs toEqual's looser judgement.
      check(isDeepStrictEqual(again.status, plan.status), () =>
        expect(again.status, `${context}: no-op pass changed status`).toEqual(plan.status),
      );
    }
    if (!wrote)
      world.advance(
        plan.requeueAfterMs !== undefined && plan.requeueAfterMs > 0
          ? Math.min(plan.requeueAfterMs, 1000)
          : 1000,
      );
  }
  return { passes, converged: false };
}

/**
 * A run of trials is CPU work only (no wait can hang it): it takes what the machine gives it, which
 * beside other forks on a busy 2-core machine was over the default 30 s.
 */
const TRIALS_TIMEOUT_MS = 120_000;

describe('planRollout simulation', () => {
  it(
    '100 randomized trials (replicas 1..5, random supersedes) converge to the newest revision fully promoted',
    () => {
      const failures: number[] = [];
      for (let seed = 1; seed <= 100; seed++) {
        if (!trial(seed).converged) failures.push(seed);
      }
      expect(failures).toEqual([]);
    },
    TRIALS_TIMEOUT_MS,
  );

  it(
    '100 trials with 30 % of writes refused (409-like), user aborts and retries also converge',
    () => {
      const failures: number[] = [];
      for (let seed = 1001; seed <= 1100; seed++) {
        if (!trial(seed, { conflictRate: 0.3, aborts: true }).converged) failures.push(seed);
      }
      expect(failures).toEqual([]);
    },
    TRIALS_TIMEOUT_MS,
  );

  it(
    '100 trials with restarts at random moments (and 30 % refused writes) converge, restarts complete',
    () => {
      const failures: number[] = [];
      for (let seed = 2001; seed <= 2100; seed++) {
        if (!trial(seed, { conflictRate: 0.3, aborts: true, restarts: true }).converged) failures.push(seed);
      }
      expect(failures).toEqual([]);
    },
    TRIALS_TIMEOUT_MS,
  );
});
