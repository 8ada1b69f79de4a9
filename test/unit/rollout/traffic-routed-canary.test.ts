// A canary beside a traffic router, as Argo Rollouts drives one: table tests of whole planner passes
// (given observed + spec + now → actions, status, requeueAfter) and of the routed replica arithmetic.
import { describe, it, expect } from 'vitest';
import { PODS_RESYNC_MS } from '../../../src/rollout/pass/finish-pass.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  planRollout,
  type RolloutAction,
  type RolloutPlan,
} from '../../../src/rollout/index.ts';
import {
  routedCanaryReplicaCounts,
  type RoutedCanaryReplicaCountsInput,
} from '../../../src/rollout/canary-replica-counts.ts';
import type { CanaryStep, CanaryStrategy, Rollout } from '../../../src/manifest/rollout.ts';
import { aPod, anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();
const STEPS: CanaryStep[] = [
  { setWeight: 20 },
  { pause: {} },
  { setWeight: 50 },
  { pause: { duration: '60s' } },
];
const V1 = hashOf('app:1');
const V2 = hashOf('app:2');
const V3 = hashOf('app:3');

const writes = (plan: RolloutPlan) => plan.actions.filter((a) => a.kind !== 'emitEvent');
const kinds = (plan: RolloutPlan) => writes(plan).map((a) => a.kind);
type WeightsAction = Extract<RolloutAction, { kind: 'setTrafficWeights' }>;
const weightsSent = (plan: RolloutPlan) =>
  plan.actions.filter((a): a is WeightsAction => a.kind === 'setTrafficWeights');
const scaleOf = (plan: RolloutPlan, image: string) =>
  plan.actions.find(
    (a): a is Extract<RolloutAction, { kind: 'scaleReplicaSet' }> =>
      a.kind === 'scaleReplicaSet' && a.name === `web-${hashOf(image)}`,
  );
const weights = (canary: number, canaryImage: string, stableImage = 'app:1', full = 100) => ({
  canary: { weight: canary, podTemplateHash: hashOf(canaryImage) },
  stable: { weight: full - canary, podTemplateHash: hashOf(stableImage) },
});

/** app:1 → app:2 over 10 replicas, an HTTPRoute (Gateway API) weighting web-canary and web-stable. */
function aRoutedUpdate(canary: Partial<CanaryStrategy> = {}, steps: CanaryStep[] = STEPS) {
  return aRollout()
    .withReplicas(10)
    .withImage('app:2')
    .withSteps(...steps)
    .withCanary({
      canaryService: 'web-canary',
      stableService: 'web-stable',
      trafficRouting: { gatewayAPI: { httpRoute: 'web' } },
      ...canary,
    });
}

interface Given {
  rollout: Rollout;
  sets: Record<string, number | ReplicaSetOptions>;
  /** Hash each Service selects (default: both on the stable app:1). */
  services?: { canary?: string; stable?: string };
  trafficError?: string;
  crashing?: string[];
}

function plan(given: Given): RolloutPlan {
  const observed = anObservedState(given.rollout);
  for (const [image, options] of Object.entries(given.sets))
    observed.withReplicaSet(image, typeof options === 'number' ? { replicas: options } : options);
  observed
    .withService('web-canary', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: given.services?.canary ?? V1 })
    .withService('web-stable', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: given.services?.stable ?? V1 });
  for (const image of given.crashing ?? [])
    observed.withPod(aPod(`web-${image}-1`, image, { waitingReason: 'CrashLoopBackOff' }));
  if (given.trafficError !== undefined) observed.withTrafficError(given.trafficError);
  return planRollout(given.rollout, observed.build(), NOW);
}

describe('trafficRouting is accepted for the providers that have a router', () => {
  it('a supported provider plans a canary: 20 % of 10 replicas is 2 canary pods, the stable keeps 10', () => {
    const rollout = aRoutedUpdate()
      .withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: STEPS.length })
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10 } });
    expect(result.status.conditions?.find((c) => c.type === 'InvalidSpec')).toBeUndefined();
    expect(writes(result)).toEqual([expect.objectContaining({ kind: 'createReplicaSet', replicas: 2 })]);
  });

  it.each([{ routing: { plugins: { 'acme/router': {} } }, named: 'plugins["acme/router"]' }])(
    '$named, which has no router, is refused by name (never split by replica ratio instead)',
    (row) => {
      const rollout = aRoutedUpdate({ trafficRouting: row.routing })
        .withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: STEPS.length })
        .build();
      const result = plan({ rollout, sets: { 'app:1': 10 } });
      expect(result.actions).toEqual([]);
      const invalid = result.status.conditions?.find((c) => c.type === 'InvalidSpec');
      expect(invalid?.message).toContain(`no traffic router for ${row.named} yet`);
    },
  );

  it('Argo\'s own spelling, plugins["argoproj-labs/gatewayAPI"], is driven as the Gateway API router', () => {
    const rollout = aRoutedUpdate({
      trafficRouting: { plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: 'web', namespace: 'default' } } },
    })
      .withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: STEPS.length })
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10 } });
    expect(writes(result)).toEqual([expect.objectContaining({ kind: 'createReplicaSet', replicas: 2 })]);
  });
});

describe('routed replica counts (Argo: canary = ⌈replicas·weight/maxTrafficWeight⌉, stable stays)', () => {
  const base: RoutedCanaryReplicaCountsInput = {
    replicas: 10,
    weight: 20,
    maxTrafficWeight: 100,
    budget: { maxSurge: 1, maxUnavailable: 1 },
    dynamicStableScale: false,
    current: { canary: { replicas: 0, available: 0 }, stable: { replicas: 10, available: 10 } },
  };
  const rows: Array<{
    name: string;
    given: Partial<RoutedCanaryReplicaCountsInput>;
    want: { target: { canary: number; stable: number }; next?: { canary: number; stable: number } };
  }> = [
    {
      name: 'setWeight 20: 2 canary pods at once (maxSurge does not cap a routed canary), stable 10',
      given: {},
      want: { target: { canary: 2, stable: 10 }, next: { canary: 2, stable: 10 } },
    },
    {
      name: 'maxTrafficWeight 1000, weight 25: ⌈10·25/1000⌉ = 1',
      given: { maxTrafficWeight: 1000, weight: 25 },
      want: { target: { canary: 1, stable: 10 } },
    },
    {
      name: 'setCanaryScale replicas 3 overrides the weight',
      given: { canaryScale: { replicas: 3 } },
      want: { target: { canary: 3, stable: 10 } },
    },
    {
      name: 'setCanaryScale weight 50 sizes the canary, not the traffic',
      given: { canaryScale: { weight: 50 } },
      want: { target: { canary: 5, stable: 10 } },
    },
    {
      name: 'minPodsPerReplicaSet raises a running canary',
      given: { weight: 5, minPodsPerReplicaSet: 2 },
      want: { target: { canary: 2, stable: 10 } },
    },
    {
      name: 'dynamicStableScale: the stable keeps the pods of the weight the router still sends it',
      given: { weight: 50, dynamicStableScale: true, stableWeightNow: 80 },
      want: { target: { canary: 5, stable: 8 }, next: { canary: 5, stable: 8 } },
    },
    {
      name: 'dynamicStableScale: once the router sends it 50, the stable shrinks to 5',
      given: { weight: 50, dynamicStableScale: true, stableWeightNow: 50 },
      want: { target: { canary: 5, stable: 5 } },
    },
    {
      name: 'dynamicStableScale at full promotion with all traffic on the canary: no stable pods',
      given: { weight: 100, dynamicStableScale: true, stableWeightNow: 0 },
      want: { target: { canary: 10, stable: 0 } },
    },
    {
      name: 'a lower setWeight (60 → 30): the canary keeps the pods for the 60 the router still sends it',
      given: {
        replicas: 5,
        weight: 30,
        canaryWeightNow: 60,
        current: { canary: { replicas: 3, available: 3 }, stable: { replicas: 5, available: 5 } },
      },
      want: { target: { canary: 2, stable: 5 }, next: { canary: 3, stable: 5 } },
    },
    {
      name: 'holdCanary keeps an aborted canary’s pods',
      given: {
        weight: 0,
        holdCanary: true,
        current: { canary: { replicas: 5, available: 5 }, stable: { replicas: 10, available: 10 } },
      },
      want: { target: { canary: 0, stable: 10 }, next: { canary: 5, stable: 10 } },
    },
  ];
  it.each(rows)('$name', ({ given, want }) => {
    const counts = routedCanaryReplicaCounts({ ...base, ...given });
    expect(counts.target).toEqual(want.target);
    if (want.next !== undefined)
      expect({ canary: counts.next.canary, stable: counts.next.stable }).toEqual(want.next);
  });

  it('old ReplicaSets shrink only within maxUnavailable (unavailable pods first)', () => {
    const counts = routedCanaryReplicaCounts({
      ...base,
      replicas: 4,
      weight: 0,
      current: {
        canary: { replicas: 0, available: 0 },
        stable: { replicas: 4, available: 2 },
        others: [{ replicas: 4, available: 3, scaleDown: true }],
      },
    });
    // 5 available, floor 3: 2 available pods may go, plus the 1 unavailable one.
    expect(counts.next.others).toEqual([1]);
  });
});

describe('the weight sent to the router follows setWeight once the canary has the pods for it', () => {
  const at = (index: number, recorded: ReturnType<typeof weights>) =>
    aRoutedUpdate()
      .atStep(index)
      .withStatus({ canary: { weights: recorded } })
      .build();
  const services = { canary: V2 };

  it('setWeight 20 with 1 of 2 canary pods available: no weight sent, wait for the pods', () => {
    const result = plan({
      rollout: at(0, weights(0, 'app:2')),
      sets: { 'app:1': 10, 'app:2': { replicas: 2, available: 1 } },
      services,
    });
    expect(weightsSent(result)).toEqual([]);
    expect(result.status.canary?.weights).toEqual(weights(0, 'app:2'));
    expect(result.status.currentStepIndex).toBe(0);
    expect(result.status.message).toBe('more replicas need to be updated');
    expect(result.requeueAfterMs).toBe(PODS_RESYNC_MS);
  });

  it('setWeight 20 with both canary pods available: 20 to the canary, recorded in status', () => {
    const result = plan({
      rollout: at(0, weights(0, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 2 },
      services,
    });
    expect(kinds(result)).toEqual(['setTrafficWeights']);
    expect(weightsSent(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 20, stableHash: V1, canaryHash: V2 },
    ]);
    expect(result.status.canary?.weights).toEqual(weights(20, 'app:2'));
    expect(result.status.currentStepIndex).toBe(0);
  });

  it('once the router holds 20, the step completes and the pause holds the weight', () => {
    const result = plan({
      rollout: at(0, weights(20, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 2 },
      services,
    });
    expect(weightsSent(result)).toEqual([]);
    expect(result.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused' });
    expect(result.status.canary?.weights).toEqual(weights(20, 'app:2'));
    expect(result.requeueAfterMs).toBeUndefined();
  });

  it('setWeight 50: the canary scales to 5 first; the weight stays 20 while 3 of 5 are available', () => {
    const scaleUp = plan({
      rollout: at(2, weights(20, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 2 },
      services,
    });
    expect(kinds(scaleUp)).toEqual(['scaleReplicaSet']);
    expect(scaleOf(scaleUp, 'app:2')?.replicas).toBe(5);
    expect(scaleOf(scaleUp, 'app:1')).toBeUndefined();

    const waiting = plan({
      rollout: at(2, weights(20, 'app:2')),
      sets: { 'app:1': 10, 'app:2': { replicas: 5, available: 3 } },
      services,
    });
    expect(writes(waiting)).toEqual([]);
    expect(waiting.status.canary?.weights).toEqual(weights(20, 'app:2'));
    expect(waiting.status.currentStepIndex).toBe(2);
    expect(waiting.requeueAfterMs).toBe(PODS_RESYNC_MS);

    const ready = plan({ rollout: at(2, weights(20, 'app:2')), sets: { 'app:1': 10, 'app:2': 5 }, services });
    expect(weightsSent(ready).map((w) => w.canaryWeight)).toEqual([50]);
  });

  it('the stable must have the available pods for the weight it keeps (80 of 100 → 8 pods) before a move', () => {
    const short = plan({
      rollout: at(0, weights(0, 'app:2')),
      sets: { 'app:1': { replicas: 10, available: 7 }, 'app:2': 2 },
      services,
    });
    expect(weightsSent(short)).toEqual([]);
    expect(short.status.canary?.weights).toEqual(weights(0, 'app:2'));
    expect(short.status.message).toBe('more replicas need to be updated');
    expect(short.requeueAfterMs).toBe(PODS_RESYNC_MS);
    const enough = plan({
      rollout: at(0, weights(0, 'app:2')),
      sets: { 'app:1': { replicas: 10, available: 8 }, 'app:2': 2 },
      services,
    });
    expect(weightsSent(enough).map((w) => w.canaryWeight)).toEqual([20]);
  });

  it('setWeight 60 → 30 with the stable short of pods: neither the weight nor the canary moves', () => {
    const rollout = aRoutedUpdate({ dynamicStableScale: true }, [
      { setWeight: 60 },
      { pause: { duration: '5s' } },
      { setWeight: 30 },
      { pause: {} },
    ])
      .withReplicas(5)
      .atStep(2)
      .withStatus({ canary: { weights: weights(60, 'app:2') } })
      .build();
    const result = plan({
      rollout,
      sets: { 'app:1': { replicas: 4, available: 2 }, 'app:2': 3 },
      services,
    });
    expect(writes(result)).toEqual([]);
    expect(result.status.message).toBe('more replicas need to be updated');
  });

  it('a canary with no available pod left gets no traffic: the router goes back to 0', () => {
    const result = plan({
      rollout: at(2, weights(20, 'app:2')),
      sets: { 'app:1': 10, 'app:2': { replicas: 5, available: 0 } },
      services,
      crashing: ['app:2'],
    });
    expect(weightsSent(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V1, canaryHash: V2 },
    ]);
  });

  it('dynamicStableScale: the stable shrinks only after the router moved its traffic away', () => {
    const dynamic = (recorded: ReturnType<typeof weights>) =>
      aRoutedUpdate({ dynamicStableScale: true })
        .atStep(2)
        .withStatus({ canary: { weights: recorded } })
        .build();
    const before = plan({
      rollout: dynamic(weights(20, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 5 },
      services,
    });
    expect(kinds(before)).toEqual(['setTrafficWeights']);
    const after = plan({
      rollout: dynamic(weights(50, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 5 },
      services,
    });
    expect(kinds(after)).toEqual(['scaleReplicaSet']);
    expect(scaleOf(after, 'app:1')?.replicas).toBe(5);
  });

  it('maxTrafficWeight 1000: weights are sent and recorded in its units, the canary sized by them', () => {
    const rollout = aRoutedUpdate({
      trafficRouting: { gatewayAPI: { httpRoute: 'web' }, maxTrafficWeight: 1000 },
    })
      .atStep(0)
      .withStatus({ canary: { weights: weights(0, 'app:2', 'app:1', 1000) } })
      .build();
    const scaleUp = plan({ rollout, sets: { 'app:1': 10, 'app:2': 0 }, services });
    expect(scaleOf(scaleUp, 'app:2')?.replicas).toBe(1);
    const sent = plan({ rollout, sets: { 'app:1': 10, 'app:2': 1 }, services });
    expect(weightsSent(sent).map((w) => w.canaryWeight)).toEqual([20]);
    expect(sent.status.canary?.weights).toEqual(weights(20, 'app:2', 'app:1', 1000));
  });
});

describe('a pass at rest holds the recorded weights, so a route edited by hand goes back (drift)', () => {
  const pausedAt20 = (canary: Partial<CanaryStrategy> = {}) =>
    aRoutedUpdate(canary)
      .atStep(0)
      .withStatus({ canary: { weights: weights(20, 'app:2') } })
      .build();
  const sets = { 'app:1': 10, 'app:2': 2 };
  const services = { canary: V2 };
  /** Plans until a pass leaves the status as it is: that pass is the one at rest. */
  function atRest(given: Given): { moving: RolloutPlan; resting: RolloutPlan } {
    let rollout = given.rollout;
    let moving = plan({ ...given, rollout });
    for (let pass = 0; pass < 5; pass++) {
      rollout = { ...rollout, status: moving.status };
      const next = plan({ ...given, rollout });
      if (JSON.stringify(next.status) === JSON.stringify(moving.status)) return { moving, resting: next };
      moving = next;
    }
    throw new Error('the status never settled');
  }

  it('paused at 20: the pass that reaches the pause sends nothing; the next, at rest, reasserts 20 and only that', () => {
    const { moving, resting } = atRest({ rollout: pausedAt20(), sets, services });
    expect(moving.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused' });
    expect(moving.actions.filter((a) => a.kind === 'reassertTrafficWeights')).toEqual([]);
    expect(resting.actions).toEqual([
      { kind: 'reassertTrafficWeights', canaryWeight: 20, stableHash: V1, canaryHash: V2 },
    ]);
    // Holding the weights is no reason to look again: an indefinite pause still waits for a change.
    expect(resting.requeueAfterMs).toBeUndefined();
  });

  it('a timed pause at rest keeps its timer beside the reassert', () => {
    const steps: CanaryStep[] = [{ setWeight: 20 }, { pause: { duration: '60s' } }];
    const rollout = aRoutedUpdate({}, steps)
      .atStep(0)
      .withStatus({ canary: { weights: weights(20, 'app:2') } })
      .build();
    const { moving, resting } = atRest({ rollout, sets, services });
    expect(resting.actions).toEqual([
      { kind: 'reassertTrafficWeights', canaryWeight: 20, stableHash: V1, canaryHash: V2 },
    ]);
    expect(resting.requeueAfterMs).toBe(moving.requeueAfterMs);
    expect(resting.requeueAfterMs).toBeGreaterThan(0);
  });

  it('healthy after a promotion: all traffic to the stable is held, with no canary hash', () => {
    const rollout = aRoutedUpdate()
      .withImage('app:2')
      .withStatus({
        stableRS: V2,
        currentPodHash: V2,
        currentStepIndex: STEPS.length,
        canary: { weights: weights(0, 'app:2', 'app:2') },
      })
      .build();
    const { resting } = atRest({
      rollout,
      sets: { 'app:2': 10 },
      services: { canary: V2, stable: V2 },
    });
    expect(resting.status.phase).toBe('Healthy');
    expect(resting.actions).toEqual([{ kind: 'reassertTrafficWeights', canaryWeight: 0, stableHash: V2 }]);
  });

  it('maxTrafficWeight 1000: the weights are held in its units', () => {
    const rollout = aRoutedUpdate({
      trafficRouting: { gatewayAPI: { httpRoute: 'web' }, maxTrafficWeight: 1000 },
    })
      .atStep(0)
      .withStatus({ canary: { weights: weights(20, 'app:2', 'app:1', 1000) } })
      .build();
    const { resting } = atRest({ rollout, sets: { 'app:1': 10, 'app:2': 1 }, services });
    expect(resting.status.canary?.weights).toEqual(weights(20, 'app:2', 'app:1', 1000));
    expect(resting.actions).toEqual([
      { kind: 'reassertTrafficWeights', canaryWeight: 20, stableHash: V1, canaryHash: V2 },
    ]);
  });

  it('not while the router is failing: its retry, timed by its backoff, owns the call', () => {
    const streak = { message: 'HTTPRoute web not found', failures: 1, since: ago(1), at: ago(1) };
    const rollout = aRoutedUpdate()
      .atStep(0)
      .withStatus({ canary: { weights: weights(20, 'app:2') }, trafficRouterError: streak })
      .build();
    const { resting } = atRest({ rollout, sets, services, trafficError: streak.message });
    // Between two retries the pass has nothing to do, and still sends nothing.
    expect(resting.status).toMatchObject({ trafficRouterError: streak });
    expect(resting.actions).toEqual([]);
    expect(resting.requeueAfterMs).toBeGreaterThan(0);
  });

  it('not without a router: the replica ratio is the split, there is no route to hold', () => {
    const rollout = aRollout()
      .withReplicas(10)
      .withImage('app:2')
      .withSteps(...STEPS)
      .withCanary({ canaryService: 'web-canary', stableService: 'web-stable' })
      .atStep(0)
      .build();
    const { resting } = atRest({ rollout, sets: { 'app:1': 8, 'app:2': 2 }, services });
    expect(resting.status.phase).toBe('Paused');
    expect(resting.actions).toEqual([]);
  });
});

describe('promotion: all traffic to the canary when its pods are ready, then the stable Service, then back', () => {
  const promoted = (recorded: ReturnType<typeof weights>) =>
    aRoutedUpdate()
      .atStep(STEPS.length)
      .withStatus({ canary: { weights: recorded } })
      .build();
  const services = { canary: V2 };

  it('past the last step with 8 of 10 canary pods available: the weight stays 50', () => {
    const result = plan({
      rollout: promoted(weights(50, 'app:2')),
      sets: { 'app:1': 10, 'app:2': { replicas: 10, available: 8 } },
      services,
    });
    expect(writes(result)).toEqual([]);
    expect(result.status.stableRS).toBe(V1);
    expect(result.requeueAfterMs).toBe(PODS_RESYNC_MS);
  });

  it('all 10 available: 100 to the canary, the stable is not switched yet', () => {
    const result = plan({
      rollout: promoted(weights(50, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 10 },
      services,
    });
    expect(writes(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 100, stableHash: V1, canaryHash: V2 },
    ]);
    expect(result.status).toMatchObject({ stableRS: V1, phase: 'Progressing' });
  });

  it('the router holds 100: the stable Service switches, then the router goes back to the stable Service', () => {
    const result = plan({
      rollout: promoted(weights(100, 'app:2')),
      sets: { 'app:1': 10, 'app:2': 10 },
      services,
    });
    expect(writes(result)).toEqual([
      {
        kind: 'scaleReplicaSet',
        name: `web-${V1}`,
        resourceVersion: '10',
        replicas: 10,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: new Date(NOW.getTime() + 30_000).toISOString() },
      },
      { kind: 'patchServiceSelector', service: 'web-stable', resourceVersion: '5', podTemplateHash: V2 },
      { kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V2 },
    ]);
    expect(result.status).toMatchObject({ stableRS: V2, phase: 'Healthy' });
    expect(result.status.canary?.weights).toEqual(weights(0, 'app:2', 'app:2'));
    expect(result.requeueAfterMs).toBe(30_000);
  });

  it('the old stable goes after scaleDownDelaySeconds (30 s with a router)', () => {
    const rollout = aRoutedUpdate()
      .stableAtCurrent()
      .withStatus({ canary: { weights: weights(0, 'app:2', 'app:2') } })
      .build();
    const deadline = (at: string) => ({
      replicas: 10,
      annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: at },
    });
    const services = { canary: V2, stable: V2 };
    const early = plan({ rollout, sets: { 'app:1': deadline(ago(-10)), 'app:2': 10 }, services });
    expect(writes(early)).toEqual([]);
    expect(early.requeueAfterMs).toBe(10_000);
    const due = plan({ rollout, sets: { 'app:1': deadline(ago(0)), 'app:2': 10 }, services });
    expect(scaleOf(due, 'app:1')?.replicas).toBe(0);
  });
});

describe('abort, supersede and the progress deadline: the route goes to 100 % stable first', () => {
  const abortedAt = (seconds: number) =>
    aRoutedUpdate()
      .atStep(2)
      .withStatus({
        abort: true,
        abortedAt: ago(seconds),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
        canary: { weights: weights(50, 'app:2') },
      })
      .build();
  const sets = { 'app:1': 10, 'app:2': 5 };

  it('the first write of an abort is setTrafficWeights canaryWeight 0; no pod is touched', () => {
    const result = plan({ rollout: abortedAt(1), sets, services: { canary: V2 } });
    expect(writes(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V1 },
      { kind: 'patchServiceSelector', service: 'web-canary', resourceVersion: '5', podTemplateHash: V1 },
    ]);
    expect(result.status.canary?.weights).toEqual(weights(0, 'app:1'));
  });

  it('once status records 0, the canary keeps its pods for abortScaleDownDelaySeconds, then goes', () => {
    const recorded = (seconds: number) =>
      aRoutedUpdate()
        .atStep(2)
        .withStatus({
          abort: true,
          abortedAt: ago(seconds),
          phase: 'Degraded',
          message: 'RolloutAborted: x',
          canary: { weights: weights(0, 'app:1') },
        })
        .build();
    const holding = plan({ rollout: recorded(10), sets });
    expect(writes(holding)).toEqual([]);
    expect(holding.requeueAfterMs).toBe(20_000);
    const due = plan({ rollout: recorded(30), sets });
    expect(kinds(due)).toEqual(['scaleReplicaSet']);
    expect(scaleOf(due, 'app:2')?.replicas).toBe(0);
    expect(due.status).toMatchObject({ phase: 'Degraded', message: 'RolloutAborted: x' });
  });

  it('a failing router never blocks the abort: scale after the delay, the weights retried after it', () => {
    const result = plan({
      rollout: abortedAt(31),
      sets,
      services: { canary: V2 },
      trafficError: 'gatewayAPI: HTTPRoute web not found',
    });
    expect(kinds(result)).toEqual(['scaleReplicaSet', 'setTrafficWeights', 'patchServiceSelector']);
    expect(scaleOf(result, 'app:2')?.replicas).toBe(0);
    expect(result.status.message).toBe('RolloutAborted: x');
  });

  it('supersede (app:3 over a canary of app:2 at 50): weight 0 first, the old canary drains after', () => {
    const rollout = aRoutedUpdate()
      .atStep(2)
      .withStatus({ canary: { weights: weights(50, 'app:2') } })
      .withImage('app:3')
      .build();
    const first = plan({ rollout, sets, services: { canary: V2 } });
    expect(writes(first)[0]).toEqual({
      kind: 'setTrafficWeights',
      canaryWeight: 0,
      stableHash: V1,
      canaryHash: V3,
    });
    expect(kinds(first)).not.toContain('scaleReplicaSet');
    expect(kinds(first)).not.toContain('createReplicaSet');
    expect(first.status.canary?.weights).toEqual(weights(0, 'app:3'));

    const next = aRoutedUpdate()
      .withImage('app:3')
      .withStatus({ ...first.status })
      .build();
    const second = plan({ rollout: next, sets, services: { canary: V3 } });
    expect(weightsSent(second)).toEqual([]);
    expect(kinds(second)).toContain('createReplicaSet');
  });

  it('progress-deadline abort: recorded first, then the route to 100 % stable before any scale', () => {
    const rollout = aRoutedUpdate()
      .withProgressDeadline(60, true)
      .atStep(2)
      .withStatus({
        canary: { weights: weights(20, 'app:2') },
        progress: { since: ago(61), availableReplicas: 0, podTemplateHash: V2, target: 5 },
      })
      .build();
    const stuck = { 'app:1': 10, 'app:2': { replicas: 5, available: 0 } };
    const recorded = plan({ rollout, sets: stuck, services: { canary: V2 }, crashing: ['app:2'] });
    expect(writes(recorded)).toEqual([]);
    expect(recorded.status).toMatchObject({ abort: true, phase: 'Degraded' });
    expect(recorded.status.message).toMatch(/^RolloutAborted: ProgressDeadlineExceeded/);
    expect(recorded.requeueAfterMs).toBe(0);

    const next = aRoutedUpdate()
      .withProgressDeadline(60, true)
      .withStatus({ ...recorded.status })
      .build();
    const carried = plan({ rollout: next, sets: stuck, services: { canary: V2 }, crashing: ['app:2'] });
    expect(writes(carried)[0]).toEqual({ kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V1 });
    expect(kinds(carried)).not.toContain('scaleReplicaSet');
  });
});

describe('abort with dynamicStableScale', () => {
  it('with no abortScaleDownDelaySeconds written, the canary goes as soon as the weights are back (Argo)', () => {
    const recorded = (canary: Partial<CanaryStrategy>) =>
      aRoutedUpdate(canary)
        .atStep(2)
        .withStatus({
          abort: true,
          abortedAt: ago(1),
          phase: 'Degraded',
          message: 'RolloutAborted: x',
          canary: { weights: weights(0, 'app:1') },
        })
        .build();
    const now = plan({ rollout: recorded({ dynamicStableScale: true }), sets: { 'app:1': 10, 'app:2': 5 } });
    expect(scaleOf(now, 'app:2')?.replicas).toBe(0);
    const written = plan({
      rollout: recorded({ dynamicStableScale: true, abortScaleDownDelaySeconds: 30 }),
      sets: { 'app:1': 10, 'app:2': 5 },
    });
    expect(scaleOf(written, 'app:2')).toBeUndefined();
    expect(written.requeueAfterMs).toBe(29_000);
  });

  it('the weights go to 0 first and the shrunk stable scales back up in the same pass; the canary stays', () => {
    const rollout = aRoutedUpdate({ dynamicStableScale: true })
      .atStep(2)
      .withStatus({
        abort: true,
        abortedAt: ago(1),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
        canary: { weights: weights(50, 'app:2') },
      })
      .build();
    const result = plan({ rollout, sets: { 'app:1': 5, 'app:2': 5 } });
    expect(kinds(result)).toEqual(['setTrafficWeights', 'scaleReplicaSet']);
    expect(scaleOf(result, 'app:1')?.replicas).toBe(10);
    expect(scaleOf(result, 'app:2')).toBeUndefined();
  });
});

describe('F1 with a router: a user abort at every phase is recorded, then the route goes to 100 % stable first', () => {
  const ANALYSIS_STEPS: CanaryStep[] = [
    { setWeight: 20 },
    { pause: {} },
    { analysis: { templates: [{ templateName: 'success-rate' }] } },
    { setWeight: 50 },
  ];
  const RUN = `web-${V2}-2`;
  const phases = [
    { phase: 'progressing', index: 0, recorded: weights(0, 'app:2'), extra: {} },
    {
      phase: 'paused',
      index: 1,
      recorded: weights(20, 'app:2'),
      extra: {
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(60) }],
        controllerPause: true,
      },
    },
    { phase: 'analysis running', index: 2, recorded: weights(20, 'app:2'), extra: {} },
  ];
  it.each(phases)('$phase', ({ index, recorded, extra }) => {
    const given = (status: Record<string, unknown>) => ({
      rollout: aRoutedUpdate({}, ANALYSIS_STEPS).atStep(index).withStatus(status).build(),
      sets: { 'app:1': 10, 'app:2': { replicas: 2, available: 1 } },
      services: { canary: V2 },
      crashing: ['app:2'],
    });
    const observedRun = (input: ReturnType<typeof given>) => {
      const observed = anObservedState(input.rollout)
        .withReplicaSet('app:1', { replicas: 10 })
        .withReplicaSet('app:2', { replicas: 2, available: 1 })
        .withService('web-canary', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V2 })
        .withService('web-stable', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V1 })
        .withPod(aPod('web-app:2-1', 'app:2', { waitingReason: 'ImagePullBackOff' }))
        .withAnalysisRun({ name: RUN, phase: 'Running' });
      return planRollout(input.rollout, observed.build(), NOW);
    };
    const first = observedRun(given({ canary: { weights: recorded }, abort: true, ...extra }));
    expect(writes(first)).toEqual([]);
    expect(first.status).toMatchObject({ phase: 'Degraded', abort: true });
    expect(first.status.message).toContain('ImagePullBackOff');
    expect(first.requeueAfterMs).toBe(0);

    const second = observedRun(given({ ...first.status }));
    expect(writes(second)[0]).toEqual({ kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V1 });
    expect(kinds(second)).toContain('terminateAnalysisRun');
    expect(kinds(second)).not.toContain('scaleReplicaSet');
    expect(second.status.canary?.weights).toEqual(weights(0, 'app:1'));
  });
});

describe('setHeaderRoute and setMirrorRoute steps', () => {
  const HEADER: CanaryStep = {
    setHeaderRoute: {
      name: 'canary-header',
      match: [{ headerName: 'X-Canary', headerValue: { exact: 'yes' } }],
    },
  };
  const MIRROR: CanaryStep = {
    setMirrorRoute: { name: 'canary-mirror', percentage: 35, match: [{ method: { exact: 'GET' } }] },
  };
  const ROUTE_STEPS: CanaryStep[] = [{ setWeight: 20 }, HEADER, MIRROR, { pause: {} }, { setWeight: 50 }];
  const routing = {
    gatewayAPI: { httpRoute: 'web' },
    managedRoutes: [{ name: 'canary-header' }, { name: 'canary-mirror' }],
  };
  const both = [
    { name: 'canary-header', kind: 'setHeaderRoute' },
    { name: 'canary-mirror', kind: 'setMirrorRoute' },
  ];
  const removed = both.map((route) => ({ ...route, removed: true }));
  const withRoutes = (status: Record<string, unknown>, steps = ROUTE_STEPS) =>
    aRoutedUpdate({ trafficRouting: routing }, steps).withStatus(status);
  const services = { canary: V2 };

  it('reached after setWeight 20: both routes are sent in step order and the steps complete in the same pass', () => {
    const rollout = withRoutes({ canary: { weights: weights(20, 'app:2') } })
      .atStep(0)
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 2 }, services });
    expect(writes(result)).toEqual([
      { kind: 'setHeaderRoute', name: 'canary-header', match: HEADER.setHeaderRoute?.match },
      { kind: 'setMirrorRoute', name: 'canary-mirror', percentage: 35, match: MIRROR.setMirrorRoute?.match },
    ]);
    expect(result.status).toMatchObject({ currentStepIndex: 3, phase: 'Paused', managedRoutes: both });
  });

  it('a route step without match removes that route (Argo)', () => {
    const rollout = withRoutes({ canary: { weights: weights(20, 'app:2') }, managedRoutes: both }, [
      { setWeight: 20 },
      { setHeaderRoute: { name: 'canary-header' } },
      { pause: {} },
    ])
      .atStep(1)
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 2 }, services });
    expect(writes(result)).toEqual([{ kind: 'setHeaderRoute', name: 'canary-header' }]);
    expect(result.status.managedRoutes).toEqual([both[1], { ...removed[0], step: 1 }]);
  });

  it('without a router, a route step is refused (InvalidSpec)', () => {
    const plain = aRollout()
      .withImage('app:2')
      .withSteps(HEADER)
      .withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: 1 })
      .build();
    const unrouted = planRollout(
      plain,
      anObservedState(plain).withReplicaSet('app:1', { replicas: 4 }).build(),
      NOW,
    );
    expect(unrouted.status.conditions?.find((c) => c.type === 'InvalidSpec')?.message).toContain(
      'setHeaderRoute needs a traffic router',
    );
  });

  it('promotion removes both routes after the weights; the record goes once the router took it', () => {
    const rollout = withRoutes({ canary: { weights: weights(100, 'app:2') }, managedRoutes: both })
      .atStep(ROUTE_STEPS.length)
      .build();
    const completed = plan({ rollout, sets: { 'app:1': 10, 'app:2': 10 }, services });
    expect(kinds(completed)).toEqual([
      'scaleReplicaSet',
      'patchServiceSelector',
      'setTrafficWeights',
      'setHeaderRoute',
      'setMirrorRoute',
    ]);
    expect(writes(completed).slice(3)).toEqual([
      { kind: 'setHeaderRoute', name: 'canary-header' },
      { kind: 'setMirrorRoute', name: 'canary-mirror' },
    ]);
    expect(completed.status.managedRoutes).toEqual(removed);

    const healthy = aRoutedUpdate({ trafficRouting: routing }, ROUTE_STEPS)
      .withStatus({ ...completed.status })
      .build();
    const after = { 'app:1': { replicas: 0 }, 'app:2': 10 };
    const settled = plan({ rollout: healthy, sets: after, services: { canary: V2, stable: V2 } });
    expect(writes(settled)).toEqual([]);
    expect(settled.status.managedRoutes).toBeUndefined();

    const failing = plan({
      rollout: healthy,
      sets: after,
      services: { canary: V2, stable: V2 },
      trafficError: 'gatewayAPI: HTTPRoute web: 503',
    });
    expect(kinds(failing)).toEqual(['setTrafficWeights', 'setHeaderRoute', 'setMirrorRoute']);
    expect(failing.status.managedRoutes).toEqual(removed);
  });

  it('abort: weights to 0 first, then the routes go', () => {
    const rollout = withRoutes({
      abort: true,
      abortedAt: ago(1),
      phase: 'Degraded',
      message: 'RolloutAborted: x',
      canary: { weights: weights(20, 'app:2') },
      managedRoutes: both,
    })
      .atStep(3)
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 2 }, services });
    expect(kinds(result)).toEqual([
      'setTrafficWeights',
      'patchServiceSelector',
      'setHeaderRoute',
      'setMirrorRoute',
    ]);
    expect(result.status.managedRoutes).toEqual(removed);
  });

  it('supersede: the replaced canary’s weight goes to 0 first, then its routes', () => {
    const rollout = withRoutes({ canary: { weights: weights(20, 'app:2') }, managedRoutes: both })
      .atStep(3)
      .withImage('app:3')
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 2 }, services });
    expect(kinds(result)).toEqual([
      'setTrafficWeights',
      'patchServiceSelector',
      'setHeaderRoute',
      'setMirrorRoute',
    ]);
    expect(result.status.managedRoutes).toEqual(removed);
  });
});

describe('a route the router failed to set', () => {
  it('is sent again with the weights while the router fails (its step has completed, as in Argo)', () => {
    const rollout = aRoutedUpdate(
      { trafficRouting: { gatewayAPI: { httpRoute: 'web' }, managedRoutes: [{ name: 'h' }] } },
      [
        { setWeight: 20 },
        { setHeaderRoute: { name: 'h', match: [{ headerName: 'X-Canary', headerValue: { exact: 'yes' } }] } },
        { pause: {} },
      ],
    )
      .atStep(2)
      .withStatus({
        canary: { weights: weights(20, 'app:2') },
        managedRoutes: [{ name: 'h', kind: 'setHeaderRoute' }],
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(5) }],
        controllerPause: true,
        trafficRouterError: { message: 'gatewayAPI: 503', failures: 1, since: ago(10), at: ago(10) },
      })
      .build();
    const result = plan({
      rollout,
      sets: { 'app:1': 10, 'app:2': 2 },
      services: { canary: V2 },
      trafficError: 'gatewayAPI: 503',
    });
    expect(kinds(result)).toEqual(['setTrafficWeights', 'setHeaderRoute']);
  });
});

describe('a header route before any canary pod is available', () => {
  it('waits: requests with the header would reach no pod', () => {
    const steps: CanaryStep[] = [
      { setCanaryScale: { replicas: 1 } },
      { setHeaderRoute: { name: 'h', match: [{ headerName: 'X-Canary', headerValue: { exact: 'yes' } }] } },
      { pause: {} },
    ];
    const rollout = aRoutedUpdate(
      { trafficRouting: { gatewayAPI: { httpRoute: 'web' }, managedRoutes: [{ name: 'h' }] } },
      steps,
    )
      .atStep(1)
      .withStatus({ canary: { weights: weights(0, 'app:2') } })
      .build();
    const waiting = plan({ rollout, sets: { 'app:1': 10, 'app:2': { replicas: 1, available: 0 } } });
    expect(kinds(waiting)).not.toContain('setHeaderRoute');
    expect(waiting.status.currentStepIndex).toBe(1);
    expect(waiting.status.message).toBe('waiting for an available canary pod before header route h');
    expect(waiting.requeueAfterMs).toBe(PODS_RESYNC_MS);
    const ready = plan({ rollout, sets: { 'app:1': 10, 'app:2': 1 } });
    expect(kinds(ready)).toContain('setHeaderRoute');
    expect(ready.status.currentStepIndex).toBe(2);
  });
});

describe("a route beside another step kind (Argo allows it: its apisix example's first step)", () => {
  const HEADER = {
    name: 'h',
    match: [{ headerName: 'X-Canary', headerValue: { exact: 'yes' } }],
  };
  const routing = { gatewayAPI: { httpRoute: 'web' }, managedRoutes: [{ name: 'h' }, { name: 'm' }] };
  const routed = (steps: CanaryStep[]) => aRoutedUpdate({ trafficRouting: routing }, steps);
  const completed = (result: RolloutPlan) =>
    result.actions.flatMap((a) =>
      a.kind === 'emitEvent' && a.reason === 'RolloutStepCompleted' ? [a.message] : [],
    );
  const steps: CanaryStep[] = [
    { setCanaryScale: { replicas: 3 }, setHeaderRoute: HEADER },
    { pause: {} },
    { setWeight: 50 },
  ];
  const zero = { canary: { weights: weights(0, 'app:2') } };
  const routeWrites = (result: RolloutPlan) =>
    writes(result).filter((a) => a.kind === 'setHeaderRoute' || a.kind === 'setMirrorRoute');
  const services = { canary: V2 };

  it('setCanaryScale + setHeaderRoute: the route is sent once a canary pod is up; the step ends when all 3 are', () => {
    const start = routed(steps).atStep(0).withStatus(zero).build();
    // No canary pod yet: requests with the header would reach none; the scale goes on.
    const scaling = plan({
      rollout: start,
      sets: { 'app:1': 10, 'app:2': { replicas: 3, available: 0 } },
      services,
    });
    expect(kinds(scaling)).not.toContain('setHeaderRoute');
    expect(scaling.status).toMatchObject({
      currentStepIndex: 0,
      message: 'waiting for an available canary pod before header route h',
    });

    // One of the 3 up: the route goes to the router, the step waits for the other two.
    const sets = { 'app:1': 10, 'app:2': { replicas: 3, available: 1 } };
    const first = plan({ rollout: start, sets, services });
    expect(routeWrites(first)).toEqual([{ kind: 'setHeaderRoute', name: 'h', match: HEADER.match }]);
    expect(first.status.currentStepIndex).toBe(0);
    expect(first.status.managedRoutes).toEqual([{ name: 'h', kind: 'setHeaderRoute', step: 0 }]);
    expect(completed(first)).toEqual([]);

    // The next passes do not send it again while the scale is under way.
    const next = routed(steps)
      .withStatus({ ...first.status })
      .build();
    const waiting = plan({
      rollout: next,
      sets: { 'app:1': 10, 'app:2': { replicas: 3, available: 2 } },
      services,
    });
    expect(routeWrites(waiting)).toEqual([]);
    expect(waiting.status.currentStepIndex).toBe(0);

    // All 3 available: the step completes (its main kind is setCanaryScale), the pause starts.
    const done = plan({ rollout: next, sets: { 'app:1': 10, 'app:2': 3 }, services });
    expect(routeWrites(done)).toEqual([]);
    expect(done.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused' });
    expect(completed(done)).toEqual(['Step 1/3 completed: setCanaryScale {"replicas":3} + setHeaderRoute h']);
    expect(done.status.managedRoutes).toEqual([{ name: 'h', kind: 'setHeaderRoute', step: 0 }]);
  });

  it('with its pod already up, the route is sent and the step completes in one pass', () => {
    const rollout = routed([{ setCanaryScale: { replicas: 1 }, setHeaderRoute: HEADER }, { pause: {} }])
      .atStep(0)
      .withStatus(zero)
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 1 }, services });
    expect(routeWrites(result)).toEqual([{ kind: 'setHeaderRoute', name: 'h', match: HEADER.match }]);
    expect(result.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused' });
  });

  it('pause + setMirrorRoute: the route is sent as the pause starts, once; the step ends when promoted', () => {
    const mirror = { name: 'm', percentage: 10, match: [{ method: { exact: 'GET' } }] };
    const pauseSteps: CanaryStep[] = [
      { setWeight: 20 },
      { pause: {}, setMirrorRoute: mirror },
      { setWeight: 50 },
    ];
    const sets = { 'app:1': 10, 'app:2': 2 };
    const rollout = routed(pauseSteps)
      .atStep(1)
      .withStatus({ canary: { weights: weights(20, 'app:2') } })
      .build();
    const first = plan({ rollout, sets, services: { canary: V2 } });
    expect(routeWrites(first)).toEqual([
      { kind: 'setMirrorRoute', name: 'm', percentage: 10, match: mirror.match },
    ]);
    expect(first.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused', controllerPause: true });

    const paused = routed(pauseSteps)
      .withStatus({ ...first.status })
      .build();
    const again = plan({ rollout: paused, sets, services: { canary: V2 } });
    expect(routeWrites(again)).toEqual([]);
    expect(again.status.currentStepIndex).toBe(1);

    // A promote removes the pause condition: the step completes, the route is not sent again.
    const promoted = routed(pauseSteps)
      .withStatus({ ...first.status, pauseConditions: [] })
      .build();
    const after = plan({ rollout: promoted, sets, services: { canary: V2 } });
    expect(kinds(after)).not.toContain('setMirrorRoute');
    expect(after.status.currentStepIndex).toBe(2);
    expect(completed(after)).toEqual(['Step 2/3 completed: pause + setMirrorRoute m']);
  });

  it('analysis + setHeaderRoute: the route is sent with the run; the step waits for the run', () => {
    const analysisSteps: CanaryStep[] = [
      { setWeight: 20 },
      { analysis: { templates: [{ templateName: 'ok' }] }, setHeaderRoute: HEADER },
    ];
    const rollout = routed(analysisSteps)
      .atStep(1)
      .withStatus({ canary: { weights: weights(20, 'app:2') } })
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 2 }, services: { canary: V2 } });
    expect(kinds(result)).toEqual(['setHeaderRoute', 'createAnalysisRun']);
    expect(result.status.currentStepIndex).toBe(1);
  });

  it('a failing router gets the route of the step still under way again, with the weights', () => {
    const rollout = routed(steps)
      .atStep(0)
      .withStatus({
        ...zero,
        managedRoutes: [{ name: 'h', kind: 'setHeaderRoute', step: 0 }],
        trafficRouterError: { message: 'gatewayAPI: 503', failures: 1, since: ago(10), at: ago(10) },
      })
      .build();
    const result = plan({
      rollout,
      sets: { 'app:1': 10, 'app:2': { replicas: 3, available: 1 } },
      trafficError: 'gatewayAPI: 503',
    });
    expect(routeWrites(result)).toContainEqual({ kind: 'setHeaderRoute', name: 'h', match: HEADER.match });
    expect(result.status.currentStepIndex).toBe(0);
  });

  it('the route goes at the end of the canary, as a route step of its own', () => {
    const rollout = routed(steps)
      .atStep(steps.length)
      .withStatus({
        canary: { weights: weights(100, 'app:2') },
        managedRoutes: [{ name: 'h', kind: 'setHeaderRoute', step: 0 }],
      })
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 10 }, services: { canary: V2 } });
    expect(routeWrites(result).filter((a) => a.kind === 'setHeaderRoute')).toEqual([
      { kind: 'setHeaderRoute', name: 'h' },
    ]);
    expect(result.status.managedRoutes).toEqual([{ name: 'h', kind: 'setHeaderRoute', removed: true }]);
  });

  it('abort: the weights go to 0, then the route', () => {
    const rollout = routed(steps)
      .atStep(0)
      .withStatus({
        abort: true,
        abortedAt: ago(1),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
        ...zero,
        managedRoutes: [{ name: 'h', kind: 'setHeaderRoute', step: 0 }],
      })
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 3 }, services: { canary: V2 } });
    expect(kinds(result)).toContain('setHeaderRoute');
    expect(result.status.managedRoutes).toEqual([{ name: 'h', kind: 'setHeaderRoute', removed: true }]);
  });
});

describe('a status that lags the router (its write refused after the router took a weight)', () => {
  it('abort: the recording pass forgets the weights, so the next pass sends 0 before any scale', () => {
    // The router took 20 for app:2 but that pass's status write was refused: status still says 0.
    const rollout = aRoutedUpdate()
      .atStep(0)
      .withStatus({ canary: { weights: weights(0, 'app:1') }, abort: true })
      .build();
    const sets = { 'app:1': 10, 'app:2': 2 };
    const recorded = plan({ rollout, sets, services: { canary: V2 } });
    expect(writes(recorded)).toEqual([]);
    expect(recorded.status.canary?.weights).toBeUndefined();
    const next = aRoutedUpdate()
      .withStatus({ ...recorded.status })
      .build();
    const carried = plan({ rollout: next, sets, services: { canary: V2 } });
    expect(writes(carried)[0]).toEqual({ kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V1 });
    expect(kinds(carried)).not.toContain('scaleReplicaSet');
  });

  it('back to the stable template: the weights are sent again and the canary keeps its pods meanwhile', () => {
    const rollout = aRoutedUpdate()
      .atStep(0)
      .withStatus({ canary: { weights: weights(0, 'app:1') } })
      .withImage('app:1')
      .build();
    const result = plan({ rollout, sets: { 'app:1': 10, 'app:2': 2 }, services: { canary: V2 } });
    expect(weightsSent(result)).toEqual([{ kind: 'setTrafficWeights', canaryWeight: 0, stableHash: V1 }]);
    expect(scaleOf(result, 'app:2')).toBeUndefined();
  });
});

describe('pingPong (ALB): the ping and pong Services swap roles instead of the stable Service switching', () => {
  const pingPong = { pingService: 'web-ping', pongService: 'web-pong' };
  /** app:1 → app:2, ALB with ping-pong; `stablePingPong` as status records it (ping: ping is stable). */
  const aPingPongUpdate = (status: Record<string, unknown>) =>
    aRollout()
      .withReplicas(10)
      .withImage('app:2')
      .withSteps(...STEPS)
      .withCanary({
        pingPong,
        trafficRouting: { alb: { ingress: 'web', servicePort: 80, rootService: 'web-root' } },
      })
      .withStatus(status);
  const planWith = (rollout: Rollout, sets: Given['sets'], selectors: { ping?: string; pong?: string }) => {
    const observed = anObservedState(rollout);
    for (const [image, options] of Object.entries(sets))
      observed.withReplicaSet(image, typeof options === 'number' ? { replicas: options } : options);
    const selector = (hash?: string) => ({
      app: 'web',
      ...(hash ? { [POD_TEMPLATE_HASH_LABEL]: hash } : {}),
    });
    observed
      .withService('web-ping', selector(selectors.ping))
      .withService('web-pong', selector(selectors.pong));
    return planRollout(rollout, observed.build(), NOW);
  };

  it('the first revision makes ping the stable and weights it 100 (Argo: empty swaps to ping)', () => {
    const rollout = aRollout()
      .withReplicas(10)
      .withImage('app:1')
      .withSteps(...STEPS)
      .withCanary({
        pingPong,
        trafficRouting: { alb: { ingress: 'web', servicePort: 80, rootService: 'web-root' } },
      })
      .build();
    const result = planWith(rollout, { 'app:1': 10 }, {});
    expect(weightsSent(result)).toEqual([
      {
        kind: 'setTrafficWeights',
        canaryWeight: 0,
        stableHash: V1,
        services: { canaryService: 'web-pong', stableService: 'web-ping' },
      },
    ]);
    expect(result.status.canary?.stablePingPong).toBe('ping');
    // The stable Service (ping) is pinned to the first revision; pong is not touched until a canary runs.
    expect(writes(result).filter((a) => a.kind === 'patchServiceSelector')).toEqual([
      { kind: 'patchServiceSelector', service: 'web-ping', resourceVersion: '5', podTemplateHash: V1 },
    ]);
  });

  it('at setWeight 20 the canary Service (pong) selects the canary; weights go to pong 20 / ping 80', () => {
    const rollout = aPingPongUpdate({
      stableRS: V1,
      currentPodHash: V2,
      currentStepIndex: 0,
      canary: { stablePingPong: 'ping' },
    }).build();
    const result = planWith(rollout, { 'app:1': 10, 'app:2': 2 }, { ping: V1 });
    expect(writes(result)).toEqual([
      { kind: 'patchServiceSelector', service: 'web-pong', resourceVersion: '5', podTemplateHash: V2 },
      {
        kind: 'setTrafficWeights',
        canaryWeight: 20,
        stableHash: V1,
        canaryHash: V2,
        services: { canaryService: 'web-pong', stableService: 'web-ping' },
      },
    ]);
    expect(result.status.canary?.stablePingPong).toBe('ping');
  });

  it('a stable Service that selects no hash yet is pinned to the stable once; one that does is left alone', () => {
    const rollout = aPingPongUpdate({
      stableRS: V1,
      currentPodHash: V2,
      currentStepIndex: 0,
      canary: { stablePingPong: 'ping' },
    }).build();
    const result = planWith(rollout, { 'app:1': 10, 'app:2': 2 }, {});
    expect(writes(result).filter((a) => a.kind === 'patchServiceSelector')).toEqual([
      { kind: 'patchServiceSelector', service: 'web-pong', resourceVersion: '5', podTemplateHash: V2 },
      { kind: 'patchServiceSelector', service: 'web-ping', resourceVersion: '5', podTemplateHash: V1 },
    ]);
  });

  it('promotion: once pong holds 100, the roles swap in the same write as the new stable, no selector moves', () => {
    const rollout = aPingPongUpdate({ canary: { stablePingPong: 'ping', weights: weights(100, 'app:2') } })
      .atStep(STEPS.length)
      .build();
    const result = planWith(rollout, { 'app:1': 10, 'app:2': 10 }, { ping: V1, pong: V2 });
    expect(weightsSent(result)).toEqual([
      {
        kind: 'setTrafficWeights',
        canaryWeight: 0,
        stableHash: V2,
        services: { canaryService: 'web-ping', stableService: 'web-pong' },
      },
    ]);
    expect(kinds(result)).not.toContain('patchServiceSelector');
    expect(result.status).toMatchObject({ stableRS: V2, canary: { stablePingPong: 'pong' } });
  });

  it('an abort leaves the roles; all traffic back on ping (stable), pong keeps its selector', () => {
    const rollout = aPingPongUpdate({
      stableRS: V1,
      currentPodHash: V2,
      currentStepIndex: 1,
      abort: true,
      abortedAt: ago(1),
      phase: 'Degraded',
      message: 'RolloutAborted: x',
      canary: { stablePingPong: 'ping', weights: weights(20, 'app:2') },
    }).build();
    const result = planWith(rollout, { 'app:1': 10, 'app:2': 2 }, { ping: V1, pong: V2 });
    expect(weightsSent(result)).toEqual([
      {
        kind: 'setTrafficWeights',
        canaryWeight: 0,
        stableHash: V1,
        services: { canaryService: 'web-pong', stableService: 'web-ping' },
      },
    ]);
    expect(kinds(result)).not.toContain('patchServiceSelector');
    expect(result.status.canary?.stablePingPong).toBe('ping');
  });

  it('at rest the recorded weights are held with the recorded roles', () => {
    const rollout = aRollout()
      .withReplicas(10)
      .withImage('app:2')
      .withSteps(...STEPS)
      .withCanary({
        pingPong,
        trafficRouting: { alb: { ingress: 'web', servicePort: 80, rootService: 'web-root' } },
      })
      .stableAtCurrent()
      .withStatus({ canary: { stablePingPong: 'pong', weights: weights(0, 'app:2', 'app:2') } })
      .build();
    const first = planWith(rollout, { 'app:2': 10 }, { ping: V1, pong: V2 });
    const settled = { ...rollout, status: first.status };
    const result = planWith(settled as Rollout, { 'app:2': 10 }, { ping: V1, pong: V2 });
    expect(writes(result)).toEqual([
      {
        kind: 'reassertTrafficWeights',
        canaryWeight: 0,
        stableHash: V2,
        services: { canaryService: 'web-ping', stableService: 'web-pong' },
      },
    ]);
  });

  it('pingPong with another router is refused by the planner, by name', () => {
    const rollout = aPingPongUpdate({ stableRS: V1, currentPodHash: V1 })
      .withCanary({ trafficRouting: { alb: { ingress: 'web', servicePort: 80 }, smi: {} } })
      .build();
    const result = planWith(rollout, { 'app:1': 10 }, {});
    expect(result.actions).toEqual([]);
    expect(result.status.conditions?.find((c) => c.type === 'InvalidSpec')?.message).toContain(
      'ping-pong Services need the ALB router, alone',
    );
  });
});
