// A weighted experiment step under a traffic router, as whole planner passes: the Experiment asked for a Service
// per weighted template; while it runs, its templates' weights sent beside canary and stable (out of the
// stable's share) and recorded; removed once the step passes, on abort and on a full promotion.
import { describe, expect, it } from 'vitest';
import {
  POD_TEMPLATE_HASH_LABEL,
  planRollout,
  type CreateExperimentAction,
  type ObservedRolloutExperiment,
  type RolloutAction,
  type RolloutPlan,
} from '../../../src/rollout/index.ts';
import type { RolloutStatus } from '../../../src/manifest/rollout.ts';
import { anObservedState } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const V1 = hashOf('app:1');
const V2 = hashOf('app:2');
const SERVICE = 'web-exp-7d9c';
const TEMPLATE_HASH = '7d9c';

type WeightsAction = Extract<RolloutAction, { kind: 'setTrafficWeights' | 'reassertTrafficWeights' }>;
const weightsSent = (plan: RolloutPlan) =>
  plan.actions.filter((a): a is WeightsAction => a.kind === 'setTrafficWeights');

/** app:1 → app:2 over 10 replicas through Istio: setWeight 10, then an experiment with a template at 20 and one unweighted. */
function rolloutAt(index: number, status: Partial<RolloutStatus> = {}) {
  return aRollout()
    .withReplicas(10)
    .withImage('app:2')
    .withSteps(
      { setWeight: 10 },
      {
        experiment: {
          templates: [
            { name: 'exp', specRef: 'canary', weight: 20 },
            { name: 'baseline', specRef: 'stable' },
          ],
        },
      },
      { pause: {} },
    )
    .withCanary({
      canaryService: 'web-canary',
      stableService: 'web-stable',
      trafficRouting: { istio: { virtualService: { name: 'web', routes: ['primary'] } } },
    })
    .atStep(index)
    .withStatus(status)
    .build();
}

function plan(index: number, status: Partial<RolloutStatus>, experiments: ObservedRolloutExperiment[]) {
  const rollout = rolloutAt(index, status);
  const observed = anObservedState(rollout)
    .withReplicaSet('app:1', { replicas: 10 })
    .withReplicaSet('app:2', { replicas: 1 })
    .withService('web-canary', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V2 })
    .withService('web-stable', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V1 })
    .build();
  return planRollout(rollout, { ...observed, experiments }, NOW);
}

const AT_10 = {
  canary: {
    weights: { canary: { weight: 10, podTemplateHash: V2 }, stable: { weight: 90, podTemplateHash: V1 } },
  },
};
const DESTINATION = { serviceName: SERVICE, podTemplateHash: TEMPLATE_HASH, weight: 20 };
const AT_10_WITH_EXPERIMENT = {
  canary: {
    weights: {
      canary: { weight: 10, podTemplateHash: V2 },
      stable: { weight: 70, podTemplateHash: V1 },
      additional: [DESTINATION],
    },
  },
};

/** The step's Experiment, named as the first pass created it, in `phase`. */
function experimentIn(
  phase: ObservedRolloutExperiment['phase'],
  extra: Partial<ObservedRolloutExperiment> = {},
): ObservedRolloutExperiment {
  const create = plan(1, AT_10, []).actions.find(
    (a): a is CreateExperimentAction => a.kind === 'createExperiment',
  );
  return {
    name: create!.name,
    phase,
    terminate: false,
    templateStatuses: [
      { name: 'exp', serviceName: SERVICE, podTemplateHash: TEMPLATE_HASH },
      { name: 'baseline' },
    ],
    ...extra,
  };
}

describe('a weighted experiment step with a traffic router', () => {
  it('asks the Experiment for a Service in front of each weighted template (named by the step, else the default)', () => {
    const create = plan(1, AT_10, []).actions.find(
      (a): a is CreateExperimentAction => a.kind === 'createExperiment',
    );
    const templates = create?.spec.templates as Array<{ name: string; service?: { name?: string } }>;
    expect(templates.map((t) => [t.name, t.service])).toEqual([
      ['exp', {}],
      ['baseline', undefined],
    ]);
  });

  it('sends nothing to the templates while the Experiment is Pending (its pods not yet available)', () => {
    const result = plan(1, AT_10, [experimentIn('Pending')]);
    expect(weightsSent(result)).toEqual([]);
    expect(result.status.canary?.weights).toEqual(AT_10.canary.weights);
  });

  it("once Running: the template's weight goes to its Service beside the canary's 10, out of the stable's share", () => {
    const result = plan(1, AT_10, [experimentIn('Running')]);
    expect(weightsSent(result)).toEqual([
      {
        kind: 'setTrafficWeights',
        canaryWeight: 10,
        stableHash: V1,
        canaryHash: V2,
        additional: [DESTINATION],
      },
    ]);
    expect(result.status.canary?.weights).toEqual(AT_10_WITH_EXPERIMENT.canary.weights);
    expect(result.status.currentStepIndex).toBe(1);
  });

  it('holds them once recorded: nothing sent again; at rest the recorded destinations are reasserted (drift)', () => {
    const recorded = plan(1, AT_10_WITH_EXPERIMENT, [experimentIn('Running')]);
    expect(weightsSent(recorded)).toEqual([]);
    // The next pass changes nothing: at rest, the weights are held as recorded.
    const result = plan(1, recorded.status, [experimentIn('Running')]);
    expect(result.actions.filter((a) => a.kind === 'reassertTrafficWeights')).toEqual([
      {
        kind: 'reassertTrafficWeights',
        canaryWeight: 10,
        stableHash: V1,
        canaryHash: V2,
        additional: [DESTINATION],
      },
    ]);
  });

  it('a template without a Service yet (or without container ports, which gets none) is given no weight', () => {
    const result = plan(1, AT_10, [experimentIn('Running', { templateStatuses: [{ name: 'exp' }] })]);
    expect(weightsSent(result)).toEqual([]);
  });

  it('once the Experiment succeeded the step passes and the destinations go: canary 10, stable 90 again', () => {
    const result = plan(1, AT_10_WITH_EXPERIMENT, [experimentIn('Successful')]);
    expect(result.status.currentStepIndex).toBe(2);
    expect(weightsSent(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 10, stableHash: V1, canaryHash: V2 },
    ]);
    expect(result.status.canary?.weights).toEqual(AT_10.canary.weights);
  });

  it('a terminated Experiment (a newer step, a stop) gives no destinations', () => {
    const result = plan(1, AT_10_WITH_EXPERIMENT, [experimentIn('Running', { terminate: true })]);
    expect(weightsSent(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 10, stableHash: V1, canaryHash: V2 },
    ]);
  });

  it('an abort sends everything back to stable, the destinations with it', () => {
    const experiments = [experimentIn('Running')];
    // The first pass records the abort, the next carries it out traffic first.
    const recorded = plan(1, { ...AT_10_WITH_EXPERIMENT, abort: true }, experiments);
    const aborted = plan(1, recorded.status, experiments);
    const sent = weightsSent(aborted);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ canaryWeight: 0, stableHash: V1 });
    expect(sent[0]?.additional).toBeUndefined();
    expect(aborted.status.canary?.weights?.additional).toBeUndefined();
  });

  it('a full promotion drops them first, before the canary is scaled up (the Experiment is stopped with them)', () => {
    const promoted = plan(1, { ...AT_10_WITH_EXPERIMENT, promoteFull: true }, [experimentIn('Running')]);
    expect(weightsSent(promoted)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 10, stableHash: V1, canaryHash: V2 },
    ]);
    expect(promoted.actions.filter((a) => a.kind === 'scaleReplicaSet')).toEqual([]);
    expect(promoted.actions).toContainEqual({
      kind: 'terminateExperiment',
      name: experimentIn('Running').name,
    });
    expect(promoted.status.canary?.weights).toEqual(AT_10.canary.weights);
  });

  it('when the step passes into a bigger setWeight, the destinations leave before the canary scales up', () => {
    const rollout = aRollout()
      .withReplicas(10)
      .withImage('app:2')
      .withSteps(
        { setWeight: 10 },
        { experiment: { templates: [{ name: 'exp', specRef: 'canary', weight: 20 }] } },
        { setWeight: 50 },
      )
      .withCanary({
        canaryService: 'web-canary',
        stableService: 'web-stable',
        trafficRouting: { smi: {} },
      })
      .atStep(1)
      .withStatus(AT_10_WITH_EXPERIMENT)
      .build();
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', { replicas: 10 })
      .withReplicaSet('app:2', { replicas: 1 })
      .withService('web-canary', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V2 })
      .withService('web-stable', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V1 })
      .build();
    const result = planRollout(rollout, { ...observed, experiments: [experimentIn('Successful')] }, NOW);
    expect(result.status.currentStepIndex).toBe(2);
    expect(weightsSent(result)).toEqual([
      { kind: 'setTrafficWeights', canaryWeight: 10, stableHash: V1, canaryHash: V2 },
    ]);
    expect(result.actions.filter((a) => a.kind === 'scaleReplicaSet')).toEqual([]);
  });

  it.each([
    [
      'with NGINX, which sends experiments nothing',
      { nginx: { stableIngress: 'web' } },
      'unsupported: with nginx (only the Istio, SMI and ALB routers send traffic to experiment templates, as in Argo)',
    ],
    ['without a router', undefined, 'requires strategy.canary.trafficRouting'],
  ])('a weight %s is InvalidSpec at its field, never run unweighted', (_name, trafficRouting, message) => {
    const rollout = aRollout()
      .withReplicas(10)
      .withImage('app:2')
      .withSteps(
        { setWeight: 10 },
        { experiment: { templates: [{ name: 'exp', specRef: 'canary', weight: 20 }] } },
      )
      .withCanary({
        canaryService: 'web-canary',
        stableService: 'web-stable',
        ...(trafficRouting !== undefined && { trafficRouting }),
      })
      .atStep(1)
      .build();
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', { replicas: 10 })
      .withReplicaSet('app:2', { replicas: 1 })
      .build();
    const result = planRollout(rollout, observed, NOW);
    expect(result.actions.filter((a) => a.kind !== 'emitEvent')).toEqual([]);
    const invalid = result.status.conditions?.find((c) => c.type === 'InvalidSpec');
    expect(invalid?.message).toContain('spec.strategy.canary.steps[1].experiment.templates[0].weight');
    expect(invalid?.message).toContain(message);
  });
});
