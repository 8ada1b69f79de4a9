// A routed canary driven pass by pass in the in-memory world: the router is never told to send traffic
// to canary pods that are not available, and it leaves a canary before that canary loses a pod.
import { describe, it, expect } from 'vitest';
import type { RolloutAction, RolloutPlan } from '../../../src/rollout/index.ts';
import type { CanaryStep, Rollout } from '../../../src/manifest/rollout.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { InMemoryWorld, type PodBehaviour } from '../../builders/in-memory-world.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import { followsAtOnce, healthyWorld } from '../../builders/run-until.ts';

const STEPS: CanaryStep[] = [
  { setWeight: 20 },
  { pause: { duration: '10s' } },
  { setWeight: 50 },
  { pause: { duration: '10s' } },
];
type Weights = Extract<RolloutAction, { kind: 'setTrafficWeights' }>;

function routedRollout(extra: Partial<Rollout['spec']> = {}): Rollout {
  const rollout = aRollout()
    .withReplicas(10)
    .withSteps(...STEPS)
    .withCanary({
      canaryService: 'web-canary',
      stableService: 'web-stable',
      trafficRouting: { gatewayAPI: { httpRoute: 'web' } },
    })
    .build();
  return { ...rollout, spec: { ...rollout.spec, ...extra } };
}

/** Pods of `hash` that are available in `world` now. */
function available(world: InMemoryWorld, hash: string): number {
  return world.observe().replicaSets.find((rs) => rs.podTemplateHash === hash)?.status.availableReplicas ?? 0;
}

/**
 * Reconciles until `until` holds, checking before each pass is applied that a weight W > 0 goes only to a
 * canary with ⌈W·replicas/100⌉ available pods. Returns every weight sent, in order.
 */
function drive(world: InMemoryWorld, until: (world: InMemoryWorld) => boolean, maxMs = 600_000): Weights[] {
  const sent: Weights[] = [];
  const end = world.now + maxMs;
  while (world.now <= end) {
    const before = world.availableByHash();
    const plan: RolloutPlan = world.reconcile();
    for (const action of plan.actions) {
      if (action.kind !== 'setTrafficWeights') continue;
      sent.push(action);
      if (action.canaryWeight > 0 && action.canaryHash !== undefined) {
        const need = Math.ceil((action.canaryWeight * 10) / 100);
        expect(
          before.get(action.canaryHash) ?? 0,
          `weight ${action.canaryWeight} at ${world.now}`,
        ).toBeGreaterThanOrEqual(need);
      }
    }
    if (until(world)) return sent;
    if (!followsAtOnce(world)) world.advance(1000);
  }
  throw new Error(`not reached; status ${JSON.stringify(world.rollout.status)}`);
}

/** Index in `world.writes` of the first scale-down of `hash`'s ReplicaSet below `replicas`. */
function firstScaleDown(world: InMemoryWorld, hash: string, below: number): number {
  return world.writes.findIndex(
    (write) => write.kind === 'scaleReplicaSet' && write.name === `web-${hash}` && write.replicas < below,
  );
}
function lastWeightsBefore(world: InMemoryWorld, index: number): Weights | undefined {
  return world.writes
    .slice(0, index)
    .filter((write): write is Weights => write.kind === 'setTrafficWeights')
    .at(-1);
}

describe('a routed canary in the in-memory world', () => {
  const slow = (image: string): PodBehaviour =>
    image === 'app:2' ? { kind: 'healthy', readyAfterMs: 20_000 } : { kind: 'healthy', readyAfterMs: 2000 };
  const services = [
    { name: 'web-canary', selector: { app: 'web' } },
    { name: 'web-stable', selector: { app: 'web' } },
  ];

  it('walks 20 → 50 → 100 only as canary pods become available, then back to the new stable', () => {
    const world = healthyWorld(routedRollout(), { behaviour: slow, services });
    world.setImage('app:2');
    const sent = drive(world, (w) => w.rollout.status?.phase === 'Healthy');
    const moves = sent.filter((w, i) => i === 0 || w.canaryWeight !== sent[i - 1]?.canaryWeight);
    expect(moves.map((w) => w.canaryWeight)).toEqual([0, 20, 50, 100, 0]);
    expect(sent.at(-1)).toEqual({ kind: 'setTrafficWeights', canaryWeight: 0, stableHash: hashOf('app:2') });
    expect(world.services.get('web-stable')?.selector['rollouts-pod-template-hash']).toBe(hashOf('app:2'));
    // The old stable keeps its pods for scaleDownDelaySeconds (30 s with a router), then goes.
    expect(available(world, hashOf('app:1'))).toBe(10);
    drive(world, (w) => available(w, hashOf('app:1')) === 0, 60_000);
  });

  it('a route edited by hand goes back on the next pass, with an Event; at rest nothing is written', () => {
    const world = healthyWorld(routedRollout(), { services });
    expect(world.routed).toEqual({ canaryWeight: 0, stableHash: hashOf('app:1'), canaryHash: undefined });
    world.reconcile();
    expect(world.lastPass).toEqual({ changed: 0, statusChanged: false, refused: false });
    world.editRoutes(30);
    world.reconcile();
    expect(world.lastPass).toEqual({ changed: 1, statusChanged: false, refused: false });
    expect(world.trafficWeight).toBe(0);
    expect(world.events.at(-1)).toMatchObject({ type: 'Warning', reason: 'TrafficDriftCorrected' });
    world.reconcile();
    expect(world.lastPass.changed).toBe(0);
  });

  it('abort at step 3: the canary loses no pod before the router sends it 0', () => {
    const world = healthyWorld(routedRollout(), { behaviour: slow, services });
    world.setImage('app:2');
    drive(world, (w) => w.rollout.status?.currentStepIndex === 3);
    world.patchStatus({ abort: true });
    drive(world, (w) => (w.sets.get(`web-${hashOf('app:2')}`)?.rs.replicas ?? 0) === 0);
    const down = firstScaleDown(world, hashOf('app:2'), 5);
    expect(lastWeightsBefore(world, down)).toMatchObject({ canaryWeight: 0, stableHash: hashOf('app:1') });
    expect(world.trafficWeight).toBe(0);
  });

  it('supersede at step 3 (app:3 over app:2 at 50): 0 to the canary before app:2 loses a pod; app:3 completes', () => {
    const world = healthyWorld(routedRollout(), { behaviour: slow, services });
    world.setImage('app:2');
    drive(world, (w) => w.rollout.status?.currentStepIndex === 3);
    world.setImage('app:3');
    drive(
      world,
      (w) => w.rollout.status?.phase === 'Healthy' && w.rollout.status.stableRS === hashOf('app:3'),
    );
    const down = firstScaleDown(world, hashOf('app:2'), 5);
    expect(down).toBeGreaterThan(-1);
    expect(lastWeightsBefore(world, down)?.canaryWeight).toBe(0);
  });

  it('an unpullable canary never gets traffic; the deadline abort keeps 100 % on the stable', () => {
    const world = healthyWorld(routedRollout({ progressDeadlineSeconds: 30, progressDeadlineAbort: true }), {
      behaviour: (image) =>
        image === 'app:2' ? { kind: 'imagePullBackOff' } : { kind: 'healthy', readyAfterMs: 2000 },
      services,
    });
    world.setImage('app:2');
    const sent = drive(
      world,
      (w) =>
        w.rollout.status?.abort === true && (w.sets.get(`web-${hashOf('app:2')}`)?.rs.replicas ?? 0) === 0,
      300_000,
    );
    expect(sent.every((w) => w.canaryWeight === 0)).toBe(true);
    expect(world.rollout.status?.message).toContain('ImagePullBackOff');
  });
});

/** The sandbox's seeded generator (mulberry32): the same seed replays the same trial. */
function prng(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

const ROUTED_STEP_SETS: CanaryStep[][] = [
  [],
  [{ setWeight: 25 }, { pause: { duration: '10s' } }, { setWeight: 50 }, { pause: {} }, { setWeight: 75 }],
  [{ setWeight: 20 }, { analysis: { templates: [{ templateName: 'ok' }] } }, { pause: { duration: 5 } }],
  [{ setWeight: 60 }, { pause: { duration: 3 } }, { setWeight: 30 }, { pause: {} }],
];

/**
 * One randomized routed trial: random replicas, steps, dynamicStableScale, supersedes, promotes, user
 * aborts and retries, and writes refused like 409s. After every pass: no weight above 0 goes to a canary
 * without the available pods for it, a canary with weight never loses the pods its weight needs, no
 * no-op pass writes; it must end with the newest revision stable, alone, and all traffic on it.
 */
function routedTrial(
  seed: number,
  conflictRate: number,
  options: { reverts?: boolean } = {},
): { converged: boolean; detail: string } {
  const random = prng(seed);
  // Its own sequence, so trials without reverts replay exactly as before.
  const reverts = prng(seed * 31337);
  const faults = prng(seed * 7919);
  const replicas = 1 + Math.floor(random() * 5);
  const steps = ROUTED_STEP_SETS[Math.floor(random() * ROUTED_STEP_SETS.length)] ?? [];
  const dynamicStableScale = random() < 0.4;
  const rollout = aRollout()
    .withReplicas(replicas)
    .withSteps(...steps)
    .withCanary({
      canaryService: 'web-canary',
      stableService: 'web-stable',
      trafficRouting: { gatewayAPI: { httpRoute: 'web' } },
      dynamicStableScale,
      scaleDownDelaySeconds: Math.floor(random() * 10),
      abortScaleDownDelaySeconds: Math.floor(random() * 10),
    })
    .build();
  const readyAfterMs = 1000 + Math.floor(random() * 3000);
  const world = new InMemoryWorld({
    rollout,
    behaviour: () => ({ kind: 'healthy', readyAfterMs }),
    fail: () => faults() < conflictRate,
    services: [
      { name: 'web-canary', selector: { app: 'web' } },
      { name: 'web-stable', selector: { app: 'web' } },
    ],
  });
  const need = (weight: number): number => Math.ceil((weight * replicas) / 100);
  let version = 1;
  const revisions = 1 + Math.floor(random() * 4);
  for (let passes = 0; passes < 3000; passes++) {
    const context = `seed ${seed} pass ${passes} R=${replicas} dynamic=${String(dynamicStableScale)}`;
    const before = world.availableByHash();
    const plan = world.reconcile();
    // Each check asks `expect` only when it fails: thousands of passes a trial, and an expect call costs
    // more than the pass it checks.
    const invalid = plan.status.conditions?.find((c) => c.type === 'InvalidSpec');
    if (invalid !== undefined) expect(invalid, context).toBeUndefined();
    for (const action of plan.actions) {
      if (action.kind !== 'setTrafficWeights' || action.canaryWeight === 0) continue;
      const available = before.get(action.canaryHash ?? '') ?? 0;
      if (available < need(action.canaryWeight))
        expect(available, `${context}: weight ${action.canaryWeight}`).toBeGreaterThanOrEqual(
          need(action.canaryWeight),
        );
    }
    // What the router holds after the pass (the world applies writes in order until one is refused).
    const routed = world.writes.filter((w): w is Weights => w.kind === 'setTrafficWeights').at(-1);
    if (routed !== undefined && routed.canaryWeight > 0 && routed.canaryHash !== undefined) {
      const replicasNow = world.sets.get(`web-${routed.canaryHash}`)?.rs.replicas ?? 0;
      if (replicasNow < need(routed.canaryWeight))
        expect(replicasNow, `${context}: canary with weight scaled below its need`).toBeGreaterThanOrEqual(
          need(routed.canaryWeight),
        );
    }
    const status = world.rollout.status ?? {};
    if (version < revisions && random() < 0.04) {
      version += 1;
      world.setImage(`app:${version}`);
      continue;
    }
    // Back to the stable template mid-canary (a revert in Git), then on to the newest again later.
    const stableImage = [...world.sets.values()].find(
      (set) => set.rs.podTemplateHash === status.stableRS,
    )?.image;
    if (
      options.reverts === true &&
      stableImage !== undefined &&
      status.currentPodHash !== status.stableRS &&
      reverts() < 0.03
    ) {
      world.setImage(stableImage);
      continue;
    }
    if (options.reverts === true && status.currentPodHash !== hashOf(`app:${version}`) && reverts() < 0.05) {
      world.setImage(`app:${version}`);
      continue;
    }
    if ((status.pauseConditions ?? []).length > 0 && random() < 0.1) {
      world.patchStatus({ pauseConditions: null });
      continue;
    }
    if (status.stableRS !== status.currentPodHash && status.abort !== true && random() < 0.02) {
      world.patchStatus({ abort: true });
      continue;
    }
    if (status.abort === true && status.phase === 'Degraded' && random() < 0.05) {
      world.patchStatus({ abort: false });
      continue;
    }
    const latest = hashOf(`app:${version}`);
    if (
      version === revisions &&
      status.stableRS === latest &&
      status.phase === 'Healthy' &&
      world.hashesWithPods().every((hash) => hash === latest)
    ) {
      const last = world.writes.filter((w): w is Weights => w.kind === 'setTrafficWeights').at(-1);
      expect(last, `${context}: all traffic on the new stable`).toMatchObject({
        canaryWeight: 0,
        stableHash: latest,
      });
      return { converged: true, detail: context };
    }
    const wrote = followsAtOnce(world) || plan.requeueAfterMs === 0;
    if (!wrote) {
      // At rest the planner may only hold the recorded weights, which the router already has.
      const again = world.reconcile();
      const writes = again.actions.filter(
        (a) => a.kind !== 'emitEvent' && a.kind !== 'reassertTrafficWeights',
      );
      if (writes.length > 0) expect(writes, `${context}: no-op pass wrote`).toEqual([]);
      if (world.lastPass.changed !== 0)
        expect(world.lastPass.changed, `${context}: no-op pass changed the world`).toBe(0);
    }
    if (!wrote) world.advance(1000);
  }
  return { converged: false, detail: `seed ${seed}: ${JSON.stringify(world.rollout.status)}` };
}

/**
 * A run of trials is CPU work only (no wait can hang it): it takes what the machine gives it, which
 * beside other forks on a busy 2-core machine was over the default 30 s.
 */
const TRIALS_TIMEOUT_MS = 120_000;

describe('routed canary simulation', () => {
  it(
    '60 randomized trials (supersedes, promotes, aborts and retries) converge with weights only on available pods',
    () => {
      const failures: string[] = [];
      for (let seed = 3001; seed <= 3060; seed++) {
        const result = routedTrial(seed, 0);
        if (!result.converged) failures.push(result.detail);
      }
      expect(failures).toEqual([]);
    },
    TRIALS_TIMEOUT_MS,
  );

  it('seeds that once failed: a lower setWeight with a stable short of pods; an abort over a status that lagged the router', () => {
    expect(routedTrial(4015, 0.3)).toMatchObject({ converged: true });
    expect(routedTrial(20397, 0.3)).toMatchObject({ converged: true });
  });

  it(
    '60 trials with reverts to the stable template mid-canary and 30 % refused writes converge too',
    () => {
      const failures: string[] = [];
      for (let seed = 5001; seed <= 5060; seed++) {
        const result = routedTrial(seed, 0.3, { reverts: true });
        if (!result.converged) failures.push(result.detail);
      }
      expect(failures).toEqual([]);
    },
    TRIALS_TIMEOUT_MS,
  );

  it(
    '60 trials with 30 % of writes refused (409-like) converge too',
    () => {
      const failures: string[] = [];
      for (let seed = 4001; seed <= 4060; seed++) {
        const result = routedTrial(seed, 0.3);
        if (!result.converged) failures.push(result.detail);
      }
      expect(failures).toEqual([]);
    },
    TRIALS_TIMEOUT_MS,
  );
});
