// Randomized blue-green trials in the in-memory world: revisions, aborts, retries, promotions, analysis results
// and refused writes in random order, every pass checked against the invariants; then it must converge.
import { POD_TEMPLATE_HASH_LABEL } from '../../../src/rollout/index.ts';
import type { ObservedAnalysisRun } from '../../../src/rollout/index.ts';
import type { BlueGreenStrategy, Rollout } from '../../../src/manifest/rollout.ts';
import { InMemoryWorld } from '../../builders/in-memory-world.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import { followsAtOnce } from '../../builders/run-until.ts';

const IMAGES = ['app:1', 'app:2', 'app:3', 'app:4'];
/** Passes after which a trial that has not converged counts as a deadlock. */
export const MAX_PASSES_PER_TRIAL = 3_000;

export interface TrialsResult {
  trials: number;
  /** Trials that did not converge, with their seed and last status. */
  failures: string[];
  /** Invariant violations, with seed and pass. */
  violations: string[];
  conflicts: number;
  maxPasses: number;
}

function lcg(seed: number): () => number {
  let state = seed % 2_147_483_648 || 1;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

function blueGreenRollout(fields: Partial<BlueGreenStrategy>): Rollout {
  const rollout = aRollout().withReplicas(3).build();
  rollout.spec.strategy = { blueGreen: { activeService: 'web', previewService: 'web-preview', ...fields } };
  return rollout;
}

/**
 * The invariants on the world as it is: what the active Service selects, and what Healthy means.
 * `skippedPost`: revisions whose post-promotion analysis the user skipped (promoteFull while it ran).
 */
function violationsOf(world: InMemoryWorld, hadPost: boolean, skippedPost: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const active = world.services.get('web')?.selector[POD_TEMPLATE_HASH_LABEL];
  const set = [...world.sets.values()].find((candidate) => candidate.rs.podTemplateHash === active);
  if (active === undefined || set === undefined)
    problems.push(`active Service selects ${active ?? 'nothing'}`);
  else if (set.rs.replicas === 0) problems.push(`active Service selects ${active}, scaled to 0`);
  else if (set.rs.status.availableReplicas === 0)
    problems.push(`active Service selects ${active}, no pod available`);
  const status = world.rollout.status ?? {};
  const current = status.currentPodHash;
  if (status.phase === 'Healthy' && current !== undefined && current === hashOf(imageOf(world))) {
    if (active !== current) problems.push(`Healthy at ${current} while the active Service selects ${active}`);
    const post = postRunOf(world, current);
    if (
      hadPost &&
      !skippedPost.has(current) &&
      status.stableRS === current &&
      post !== undefined &&
      !post.terminated &&
      post.phase !== 'Successful'
    )
      problems.push(`Healthy at ${current} with post-promotion ${post.phase}`);
  }
  return problems;
}

function imageOf(world: InMemoryWorld): string {
  return world.rollout.spec.template.spec.containers[0]?.image ?? '';
}

/** Runs `trials` seeded trials; each starts from a live first revision. */

/** The post-promotion run of revision `hash`, whatever its number (`web-<hash>-<revision>-post`). */
export function postRunOf(world: InMemoryWorld, hash: string) {
  return [...world.runs.values()].find(
    (run) => run.name.startsWith(`web-${hash}-`) && run.name.endsWith('-post'),
  );
}

export function runBlueGreenTrials(options: { trials: number; seed: number }): TrialsResult {
  const result: TrialsResult = {
    trials: options.trials,
    failures: [],
    violations: [],
    conflicts: 0,
    maxPasses: 0,
  };
  for (let trial = 0; trial < options.trials; trial++) {
    const seed = options.seed + trial;
    const random = lcg(seed);
    const fields: Partial<BlueGreenStrategy> = {
      ...(random() < 0.5 ? { previewReplicaCount: 1 } : {}),
      ...(random() < 0.5
        ? { autoPromotionEnabled: false }
        : random() < 0.5
          ? { autoPromotionSeconds: 20 }
          : {}),
      ...(random() < 0.5 ? { prePromotionAnalysis: { templates: [{ templateName: 'smoke' }] } } : {}),
      ...(random() < 0.5 ? { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } } : {}),
      scaleDownDelaySeconds: Math.floor(random() * 60),
      abortScaleDownDelaySeconds: Math.floor(random() * 60),
    };
    let chaos = false;
    let failedRuns = 0.2;
    const world = new InMemoryWorld({
      rollout: blueGreenRollout(fields),
      services: [
        { name: 'web', selector: { app: 'web' } },
        { name: 'web-preview', selector: { app: 'web' } },
      ],
      analysisMs: 3_000 + Math.floor(random() * 20_000),
      analysisResult: (): ObservedAnalysisRun['phase'] => {
        if (!chaos) return 'Successful';
        const roll = random();
        return roll < failedRuns ? 'Failed' : roll < failedRuns + 0.1 ? 'Inconclusive' : 'Successful';
      },
      fail: () => chaos && random() < 0.3,
    });
    // The first revision, without faults.
    for (let i = 0; i < 100 && world.rollout.status?.phase !== 'Healthy'; i++) {
      world.reconcile();
      if (!followsAtOnce(world)) world.advance(1000);
    }
    chaos = true;
    let passes = 0;
    const skippedPost = new Set<string>();
    const pass = (): void => {
      world.reconcile();
      passes += 1;
      // An abort (the user's or the analysis's) ends the skip: a later run of that revision decides again.
      const after = world.rollout.status ?? {};
      if (after.abort === true && after.currentPodHash !== undefined)
        skippedPost.delete(after.currentPodHash);
      for (const problem of violationsOf(world, fields.postPromotionAnalysis !== undefined, skippedPost))
        result.violations.push(`seed ${seed} pass ${passes}: ${problem}`);
      if (!followsAtOnce(world) || random() < 0.3) world.advance(Math.floor(random() * 5_000));
    };
    // Chaos: user actions at random moments.
    const actions = 3 + Math.floor(random() * 6);
    for (let a = 0; a < actions; a++) {
      for (let wait = Math.floor(random() * 40); wait > 0; wait--) pass();
      const roll = random();
      if (roll < 0.45) world.setImage(IMAGES[Math.floor(random() * IMAGES.length)] as string);
      else if (roll < 0.6) world.patchStatus({ abort: true });
      else if (roll < 0.7) world.patchStatus({ abort: null });
      else if (roll < 0.85) world.patchStatus({ pauseConditions: null });
      else {
        // promoteFull skips analysis (Argo): a post-promotion run the planner has not acted on yet (still
        // running, or ended since its last pass, the rollout not aborted) no longer decides.
        const status = world.rollout.status ?? {};
        const current = status.currentPodHash;
        const post = postRunOf(world, current ?? '');
        if (current !== undefined && post !== undefined && status.abort !== true) skippedPost.add(current);
        world.patchStatus({ promoteFull: true });
      }
    }
    // Settle: analyses pass, the user promotes any pause and retries any abort; writes still fail.
    failedRuns = 0;
    chaos = false;
    const target = hashOf(imageOf(world));
    let converged = false;
    while (passes < MAX_PASSES_PER_TRIAL) {
      const status = world.rollout.status ?? {};
      if (status.abort === true) world.patchStatus({ abort: null });
      if ((status.pauseConditions ?? []).length > 0) world.patchStatus({ pauseConditions: null });
      pass();
      const after = world.rollout.status ?? {};
      const active = world.services.get('web')?.selector[POD_TEMPLATE_HASH_LABEL];
      if (
        after.phase === 'Healthy' &&
        after.stableRS === target &&
        after.currentPodHash === target &&
        active === target
      ) {
        converged = true;
        break;
      }
    }
    result.conflicts += world.conflicts;
    result.maxPasses = Math.max(result.maxPasses, passes);
    if (!converged) result.failures.push(`seed ${seed}: ${JSON.stringify(world.rollout.status)}`);
  }
  return result;
}
