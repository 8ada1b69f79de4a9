// planRollout transitions, one observed state at a time, built with the test builders.
import { describe, it, expect } from 'vitest';
import { PODS_RESYNC_MS } from '../../../src/rollout/pass/finish-pass.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  planRollout,
  type RolloutAction,
  type RolloutPlan,
} from '../../../src/rollout/index.ts';
import { aPod, anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import type { Rollout } from '../../../src/manifest/rollout.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();
const kinds = (plan: RolloutPlan) => plan.actions.map((a) => a.kind);
const writes = (plan: RolloutPlan) => plan.actions.filter((a) => a.kind !== 'emitEvent');
const scaleOf = (plan: RolloutPlan, image: string) =>
  plan.actions.find(
    (a): a is Extract<RolloutAction, { kind: 'scaleReplicaSet' }> =>
      a.kind === 'scaleReplicaSet' && a.name === `web-${hashOf(image)}`,
  );
const condition = (plan: RolloutPlan, type: string) => plan.status.conditions?.find((c) => c.type === type);
const weights = (canary: number, canaryImage: string, stableImage = 'app:1') => ({
  canary: { weight: canary, podTemplateHash: hashOf(canaryImage) },
  stable: { weight: 100 - canary, podTemplateHash: hashOf(stableImage) },
});
/** A rollout of `replicas` pods whose template moves from app:1 to app:2. */
const anUpdate = (replicas: number) => aRollout().withReplicas(replicas).withImage('app:2');
/** What the planner sees of `rollout`: one ReplicaSet per image, given as replicas or full options. */
const observedWith = (rollout: Rollout, replicaSets: Record<string, number | ReplicaSetOptions>) => {
  const observed = anObservedState(rollout);
  for (const [image, options] of Object.entries(replicaSets))
    observed.withReplicaSet(image, typeof options === 'number' ? { replicas: options } : options);
  return observed;
};
/** planRollout at NOW, over the ReplicaSets of {@link observedWith}. */
const planOver = (rollout: Rollout, replicaSets: Record<string, number | ReplicaSetOptions> = {}) =>
  planRollout(rollout, observedWith(rollout, replicaSets).build(), NOW);

describe('first deploy and steady state', () => {
  it('a new ReplicaSet keeps the Git commit and author the Rollout was synced from, and its revision number, and no other annotation', () => {
    const rollout = aRollout()
      .withAnnotations({
        'rollgate.dev/commit': 'c0ffee',
        'rollgate.dev/commit-author': 'Ada <ada@example.com>',
        'rollgate.dev/file': 'apps/web.yaml',
      })
      .build();
    const create = planOver(rollout).actions.find((a) => a.kind === 'createReplicaSet');
    expect(create).toMatchObject({
      annotations: {
        'rollgate.dev/commit': 'c0ffee',
        'rollgate.dev/commit-author': 'Ada <ada@example.com>',
        'rollout.argoproj.io/revision': '1',
      },
    });
    expect(Object.keys((create as { annotations: object }).annotations)).toHaveLength(3);
    const plain = planOver(aRollout().build()).actions.find((a) => a.kind === 'createReplicaSet');
    expect((plain as { annotations: object }).annotations).toEqual({ 'rollout.argoproj.io/revision': '1' });
  });

  it('fresh rollout: creates <name>-<hash> with the hash label on RS, selector and template; it becomes stable at once', () => {
    const rollout = aRollout().withReplicas(3).withSteps({ setWeight: 50 }).build();
    const plan = planOver(rollout);
    const create = plan.actions.find((a) => a.kind === 'createReplicaSet');
    const hash = hashOf('app:1');
    expect(create).toMatchObject({
      name: `web-${hash}`,
      podTemplateHash: hash,
      replicas: 3,
      labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash },
      selector: { matchLabels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash } },
      template: { metadata: { labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash } } },
    });
    expect(plan.status).toMatchObject({
      stableRS: hash,
      currentPodHash: hash,
      currentStepIndex: 1,
      phase: 'Progressing',
    });
    expect(plan.status.observedGeneration).toBe('1');
  });

  it('an existing ReplicaSet with the same hash is adopted, not duplicated (RS exists, status empty)', () => {
    const rollout = aRollout().withReplicas(2).build();
    const plan = planOver(rollout, { 'app:1': 2 });
    expect(writes(plan).filter((a) => a.kind === 'createReplicaSet')).toEqual([]);
    expect(plan.status.phase).toBe('Healthy');
    expect(condition(plan, 'Healthy')?.status).toBe('True');
    expect(condition(plan, 'Completed')?.status).toBe('True');
  });

  it('a healthy rollout re-planned over its own status writes nothing and requeues nothing', () => {
    const rollout = aRollout().withReplicas(2).build();
    const observed = observedWith(rollout, { 'app:1': 2 }).build();
    const first = planRollout(rollout, observed, NOW);
    const again = planRollout(
      { ...rollout, status: first.status },
      { ...observed, rollout: { ...rollout, status: first.status } },
      new Date(NOW.getTime() + 60_000),
    );
    expect(again.actions).toEqual([]);
    expect(again.status).toEqual(first.status);
    expect(again.requeueAfterMs).toBeUndefined();
  });
});

describe('canary steps', () => {
  it('new revision: creates the canary within the surge ceiling and records the update', () => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 25 }, { pause: {} })
      .withStatus({
        stableRS: hashOf('app:1'),
        currentPodHash: hashOf('app:1'),
      })
      .build();
    const plan = planOver(rollout, { 'app:1': 4 });
    expect(plan.actions).toContainEqual(expect.objectContaining({ kind: 'createReplicaSet', replicas: 1 }));
    expect(plan.actions).toContainEqual(
      expect.objectContaining({ kind: 'emitEvent', reason: 'RolloutUpdated' }),
    );
    expect(plan.status.currentStepIndex).toBe(0);
    expect(plan.status.progress).toMatchObject({
      since: NOW.toISOString(),
      podTemplateHash: hashOf('app:2'),
    });
    expect(plan.requeueAfterMs).toBe(600_000);
  });

  it('scale up first, then traffic, then scale stable down — one phase per pass', () => {
    const rollout = anUpdate(4).withSteps({ setWeight: 50 }).atStep(0).build();
    const withCanary = (canaryReplicas: number, canaryAvailable: number, stable: number, w?: number) => {
      const r: Rollout =
        w === undefined
          ? rollout
          : { ...rollout, status: { ...rollout.status, canary: { weights: weights(w, 'app:2') } } };
      return planOver(r, {
        'app:1': stable,
        'app:2': { replicas: canaryReplicas, available: canaryAvailable },
      });
    };
    expect(kinds(withCanary(0, 0, 4))).toEqual(['scaleReplicaSet']);
    expect(scaleOf(withCanary(0, 0, 4), 'app:2')?.replicas).toBe(1);
    const traffic = withCanary(1, 0, 4);
    expect(kinds(traffic)).toEqual(['setTrafficWeights']);
    expect(traffic.status.canary?.weights).toEqual(weights(50, 'app:2'));
    const down = withCanary(1, 1, 4, 50);
    expect(kinds(down)).toEqual(['scaleReplicaSet']);
    // available 5, floor 3: the stable may lose 2 at once, down to its 50 % target of 2.
    expect(scaleOf(down, 'app:1')?.replicas).toBe(2);
  });

  it('a settled setWeight step advances to a pause step, which starts its timer', () => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 50 }, { pause: { duration: '1m' } })
      .atStep(0)
      .withStatus({ canary: { weights: weights(50, 'app:2') } })
      .build();
    const plan = planOver(rollout, { 'app:1': 2, 'app:2': 2 });
    expect(plan.status.currentStepIndex).toBe(1);
    expect(plan.status.pauseConditions).toEqual([
      { reason: 'CanaryPauseStep', startTime: NOW.toISOString() },
    ]);
    expect(plan.status.controllerPause).toBe(true);
    expect(plan.status.phase).toBe('Paused');
    expect(plan.requeueAfterMs).toBe(60_000);
    expect(writes(plan)).toEqual([]);
  });

  it('promote while paused (conditions cleared by the CLI, even if our last status write conflicted) advances', () => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 50 }, { pause: {} }, { setWeight: 100 })
      .atStep(1)
      .withStatus({ canary: { weights: weights(50, 'app:2') }, controllerPause: true })
      .build();
    const plan = planOver(rollout, { 'app:1': 2, 'app:2': 2 });
    expect(plan.status.currentStepIndex).toBe(2);
    expect(plan.status.pauseConditions).toBeUndefined();
    expect(plan.status.controllerPause).toBeUndefined();
    expect(scaleOf(plan, 'app:2')?.replicas).toBe(3);
  });

  it('spec and replicas changed together while paused: the new revision restarts at step 0 with the new count', () => {
    const rollout = aRollout()
      .withReplicas(6)
      .withImage('app:3')
      .withSteps({ setWeight: 50 }, { pause: {} })
      .withStatus({
        stableRS: hashOf('app:1'),
        currentPodHash: hashOf('app:2'),
        currentStepIndex: 1,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(60) }],
        controllerPause: true,
      })
      .build();
    const plan = planOver(rollout, { 'app:1': 2, 'app:2': 2 });
    expect(plan.status).toMatchObject({
      currentStepIndex: 0,
      currentPodHash: hashOf('app:3'),
      supersededPodHash: hashOf('app:2'),
    });
    expect(plan.status.pauseConditions).toBeUndefined();
    expect(plan.actions).toContainEqual(
      expect.objectContaining({ kind: 'emitEvent', reason: 'RolloutSuperseded' }),
    );
    // The stable grows toward 6 within the surge while the superseded canary drains; the new canary holds.
    expect(plan.actions).toContainEqual(expect.objectContaining({ kind: 'createReplicaSet', replicas: 0 }));
    expect(plan.status.stableRS).toBe(hashOf('app:1'));
  });

  it('status says step 3 but the canary ReplicaSet is missing: it is recreated, the index kept', () => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 25 }, { pause: {} }, { setWeight: 50 }, { setWeight: 75 })
      .atStep(3)
      .build();
    const plan = planOver(rollout, { 'app:1': 4 });
    expect(plan.actions).toContainEqual(
      expect.objectContaining({ kind: 'createReplicaSet', podTemplateHash: hashOf('app:2') }),
    );
    expect(plan.status.currentStepIndex).toBe(3);
  });

  it('replicas 1: canary and stable each keep one pod until the end, then the canary alone', () => {
    const rollout = anUpdate(1).withSteps({ setWeight: 50 }).atStep(0).build();
    const plan = planOver(rollout, { 'app:1': 1 });
    expect(plan.actions).toContainEqual(expect.objectContaining({ kind: 'createReplicaSet', replicas: 1 }));
    const done = anUpdate(1)
      .withSteps({ setWeight: 50 })
      .atStep(1)
      .withStatus({ canary: { weights: weights(50, 'app:2') } })
      .build();
    const completion = planOver(done, { 'app:1': 1, 'app:2': 1 });
    expect(completion.status).toMatchObject({ stableRS: hashOf('app:2'), phase: 'Healthy' });
    // Without a traffic router the old stable's pods serve behind the same Service: no delay (Argo's default).
    const annotated = scaleOf(completion, 'app:1');
    expect(annotated).toMatchObject({
      replicas: 1,
      annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: NOW.toISOString() },
    });
    expect(completion.requeueAfterMs).toBe(0);
  });

  it('an explicit scaleDownDelaySeconds on a replica-ratio canary is honoured (an extension of Argo)', () => {
    const done = anUpdate(1)
      .withSteps({ setWeight: 50 })
      .withCanary({ scaleDownDelaySeconds: 30 })
      .atStep(1)
      .withStatus({ canary: { weights: weights(50, 'app:2') } })
      .build();
    const completion = planOver(done, { 'app:1': 1, 'app:2': 1 });
    expect(scaleOf(completion, 'app:1')).toMatchObject({
      replicas: 1,
      annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: new Date(NOW.getTime() + 30_000).toISOString() },
    });
    expect(completion.requeueAfterMs).toBe(30_000);
  });
});

describe('an old stable whose scale-down delay ends mid-canary', () => {
  // app:1 was the stable before app:2; its delayed scale-down falls due while app:3 runs its canary at 20 %.
  const midCanary = (step: number, weight: number) =>
    aRollout()
      .withReplicas(4)
      .withImage('app:3')
      .withSteps({ setWeight: 20 }, { pause: {} })
      .withCanary({
        canaryService: 'web-canary',
        stableService: 'web-stable',
        trafficRouting: { nginx: { stableIngress: 'web' } },
      })
      .withStatus({
        stableRS: hashOf('app:2'),
        currentPodHash: hashOf('app:3'),
        currentStepIndex: step,
        canary: { weights: weights(weight, 'app:3', 'app:2') },
      })
      .build();
  const over = (rollout: Rollout) =>
    planRollout(
      rollout,
      observedWith(rollout, {
        'app:1': {
          replicas: 4,
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(1) },
          createdAt: ago(600),
        },
        'app:2': { replicas: 4, createdAt: ago(60) },
        'app:3': { replicas: 1, createdAt: ago(5) },
      })
        .withService('web-canary', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hashOf('app:3') })
        .withService('web-stable', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hashOf('app:2') })
        .build(),
      NOW,
    );

  it('is scaled down at 20 % without routing the canary to 0: it serves no traffic, it is no superseded canary', () => {
    const plan = over(midCanary(0, 20));
    expect(plan.status.currentStepIndex).toBe(1);
    expect(plan.status.canary?.weights).toEqual(weights(20, 'app:3', 'app:2'));
    expect(plan.actions).not.toContainEqual(expect.objectContaining({ kind: 'setTrafficWeights' }));
    expect(scaleOf(plan, 'app:1')?.replicas).toBe(0);
  });

  it('a canary paused at 20 % keeps its weight while it goes', () => {
    const plan = over(midCanary(1, 20));
    expect(plan.status.phase).toBe('Paused');
    expect(plan.status.canary?.weights).toEqual(weights(20, 'app:3', 'app:2'));
    expect(plan.actions).not.toContainEqual(expect.objectContaining({ kind: 'setTrafficWeights' }));
    expect(scaleOf(plan, 'app:1')?.replicas).toBe(0);
  });
});

describe('a superseded canary dated by a partial drain', () => {
  it('still holds the new canary: newer than the stable, it is no previous stable', () => {
    // app:3 was superseded and partly drained (dated); a later supersede left no status record of it.
    const rollout = aRollout()
      .withReplicas(4)
      .withImage('app:4')
      .withSteps({ setWeight: 20 }, { pause: {} })
      .withStatus({ stableRS: hashOf('app:2'), currentPodHash: hashOf('app:4'), currentStepIndex: 0 })
      .build();
    const plan = planOver(rollout, {
      'app:2': { replicas: 4, createdAt: ago(60) },
      'app:3': {
        replicas: 2,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(1) },
        createdAt: ago(30),
      },
      'app:4': { replicas: 0, createdAt: ago(5) },
    });
    expect(scaleOf(plan, 'app:4')).toBeUndefined();
    // Weight 0 first, as for any superseded canary; the drain follows once the router holds it.
    expect(plan.actions).toEqual([
      expect.objectContaining({ kind: 'setTrafficWeights', canaryWeight: 0, stableHash: hashOf('app:2') }),
    ]);
  });
});

describe('analysis', () => {
  const withRun = (
    phase: 'Running' | 'Successful' | 'Failed' | 'Inconclusive',
    status: Record<string, unknown> = {},
  ) => {
    const rollout = anUpdate(2)
      .withSteps(
        { setWeight: 50 },
        {
          analysis: {
            templates: [{ templateName: 'success-rate' }],
            args: [
              { name: 'canary-hash', valueFrom: { podTemplateHashValue: 'Latest' } },
              { name: 'stable-hash', valueFrom: { podTemplateHashValue: 'Stable' } },
              { name: 'service', value: 'web' },
            ],
          },
        },
        { setWeight: 100 },
      )
      .atStep(1)
      .withStatus({ canary: { weights: weights(50, 'app:2') }, ...status })
      .build();
    const builder = observedWith(rollout, { 'app:1': 1, 'app:2': 1 });
    if (phase !== 'Running' || status.created === true) {
      builder.withAnalysisRun({
        name: `web-${hashOf('app:2')}-2-1`,
        phase,
        message: 'success-rate 0.41 < 0.95',
      });
    }
    return planRollout(rollout, builder.build(), NOW);
  };

  it('creates the step run with a deterministic name and resolved hash args, then waits', () => {
    const plan = withRun('Running');
    expect(plan.actions).toContainEqual({
      kind: 'createAnalysisRun',
      name: `web-${hashOf('app:2')}-2-1`,
      templates: [{ templateName: 'success-rate' }],
      args: [
        { name: 'canary-hash', value: hashOf('app:2') },
        { name: 'stable-hash', value: hashOf('app:1') },
        { name: 'service', value: 'web' },
      ],
      labels: expect.objectContaining({
        [POD_TEMPLATE_HASH_LABEL]: hashOf('app:2'),
        'rollgate.dev/step-index': '1',
      }),
      background: false,
    });
    expect(plan.status.message).toContain('waiting for AnalysisRun');
  });

  it('Successful → next step', () => {
    expect(withRun('Successful').status.currentStepIndex).toBe(2);
  });

  it('Failed → abort recorded alone, naming the run and its message', () => {
    const plan = withRun('Failed');
    expect(plan.status).toMatchObject({ abort: true, phase: 'Degraded', abortedAt: NOW.toISOString() });
    expect(plan.status.message).toBe(
      `RolloutAborted: AnalysisRun web-${hashOf('app:2')}-2-1 Failed: success-rate 0.41 < 0.95`,
    );
    expect(writes(plan)).toEqual([]);
    expect(plan.requeueAfterMs).toBe(0);
  });

  it('Inconclusive → paused with InconclusiveAnalysisRun; the run is kept, never recreated', () => {
    const plan = withRun('Inconclusive');
    expect(plan.status.pauseConditions?.map((c) => c.reason)).toEqual(['InconclusiveAnalysisRun']);
    expect(plan.status.controllerPause).toBe(true);
    expect(plan.status.phase).toBe('Paused');
    expect(kinds(plan).filter((k) => k.includes('AnalysisRun'))).toEqual([]);
    const later = withRun('Inconclusive', {
      pauseConditions: plan.status.pauseConditions,
      controllerPause: true,
    });
    expect(later.status.currentStepIndex).toBe(1);
    expect(kinds(later).filter((k) => k.includes('AnalysisRun'))).toEqual([]);
  });

  it('background analysis starts at startingStep and is terminated on completion', () => {
    const rollout = anUpdate(2)
      .withSteps({ setWeight: 50 }, { pause: {} })
      .withCanary({ analysis: { templates: [{ templateName: 'bg' }], startingStep: 1 } })
      .atStep(0)
      .build();
    const observed = observedWith(rollout, { 'app:1': 2, 'app:2': 0 });
    expect(kinds(planRollout(rollout, observed.build(), NOW))).not.toContain('createAnalysisRun');
    const atOne = { ...rollout, status: { ...rollout.status, currentStepIndex: 1 } };
    const start = planRollout(atOne, { ...observed.build(), rollout: atOne }, NOW);
    expect(start.actions).toContainEqual(
      expect.objectContaining({
        kind: 'createAnalysisRun',
        name: `web-${hashOf('app:2')}-2`,
        background: true,
      }),
    );
    const done = {
      ...rollout,
      status: { ...rollout.status, currentStepIndex: 2, canary: { weights: weights(50, 'app:2') } },
    };
    const complete = planRollout(
      done,
      observedWith(done, { 'app:1': 0, 'app:2': 2 })
        .withAnalysisRun({ name: `web-${hashOf('app:2')}-2`, phase: 'Running' })
        .build(),
      NOW,
    );
    expect(complete.status.stableRS).toBe(hashOf('app:2'));
    expect(complete.actions).toContainEqual({
      kind: 'terminateAnalysisRun',
      name: `web-${hashOf('app:2')}-2`,
    });
  });
});

describe('abort', () => {
  const aborted = (extra: Record<string, unknown>, trafficError?: string) => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 50 }, { pause: {} })
      .withCanary({
        canaryService: 'web-canary',
        stableService: 'web-stable',
        abortScaleDownDelaySeconds: 30,
      })
      .atStep(1)
      .withStatus({ canary: { weights: weights(50, 'app:2') }, ...extra })
      .build();
    const builder = observedWith(rollout, { 'app:1': 2, 'app:2': { replicas: 2, available: 0 } })
      .withPod(
        aPod('web-x-1', 'app:2', {
          waitingReason: 'ImagePullBackOff',
          waitingMessage: 'Back-off pulling image "app:2"',
        }),
      )
      .withService('web-canary', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hashOf('app:2') })
      .withService('web-stable', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hashOf('app:1') });
    if (trafficError !== undefined) builder.withTrafficError(trafficError);
    return planRollout(rollout, builder.build(), NOW);
  };

  it('user abort: recorded first (status + event only), naming failing pods', () => {
    const plan = aborted({ abort: true });
    expect(plan.status).toMatchObject({ phase: 'Degraded', abort: true, abortedAt: NOW.toISOString() });
    expect(plan.status.message).toBe(
      `RolloutAborted: Rollout aborted update to revision 2; pod web-x-1 container app: ImagePullBackOff: Back-off pulling image "app:2"`,
    );
    expect(kinds(plan)).toEqual(['emitEvent']);
    expect(plan.status.pauseConditions).toBeUndefined();
  });

  it('then traffic to stable before any pod is touched', () => {
    const plan = aborted({ abort: true, abortedAt: ago(1), phase: 'Degraded', message: 'RolloutAborted: x' });
    expect(plan.actions).toEqual([
      {
        kind: 'patchServiceSelector',
        service: 'web-canary',
        resourceVersion: '5',
        podTemplateHash: hashOf('app:1'),
      },
      { kind: 'setTrafficWeights', canaryWeight: 0, stableHash: hashOf('app:1') },
    ]);
    expect(plan.status.message).toBe('RolloutAborted: x');
    // The abort delay ends in 29 s, but the canary's pods are still coming up: look again sooner.
    expect(plan.requeueAfterMs).toBe(PODS_RESYNC_MS);
  });

  it('a failing router never blocks the scale-down; it is retried after the scale actions', () => {
    const plan = aborted(
      { abort: true, abortedAt: ago(31), phase: 'Degraded', message: 'RolloutAborted: x' },
      'istio: 503',
    );
    expect(kinds(plan)).toEqual([
      'scaleReplicaSet',
      'scaleReplicaSet',
      'patchServiceSelector',
      'setTrafficWeights',
    ]);
    expect(scaleOf(plan, 'app:2')?.replicas).toBe(0);
    expect(plan.status.phase).toBe('Degraded');
    expect(plan.requeueAfterMs).toBe(5000);
  });

  it('a replica-ratio canary is scaled down at once after an abort (abortScaleDownDelaySeconds defaults to 0)', () => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 50 })
      .atStep(0)
      .withStatus({
        abort: true,
        abortedAt: NOW.toISOString(),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
        canary: { weights: weights(0, 'app:1') },
      })
      .build();
    const plan = planOver(rollout, { 'app:1': 2, 'app:2': 2 });
    expect(scaleOf(plan, 'app:1')?.replicas).toBe(3);
    expect(scaleOf(plan, 'app:2')?.replicas).toBe(1);
  });

  it('an explicit abortScaleDownDelaySeconds on a replica-ratio canary keeps its pods that long', () => {
    const rollout = anUpdate(4)
      .withSteps({ setWeight: 50 })
      .withCanary({ abortScaleDownDelaySeconds: 60 })
      .atStep(0)
      .withStatus({
        abort: true,
        abortedAt: ago(1),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
        canary: { weights: weights(0, 'app:1') },
      })
      .build();
    const plan = planOver(rollout, { 'app:1': 2, 'app:2': 2 });
    expect(scaleOf(plan, 'app:2')).toBeUndefined();
    expect(scaleOf(plan, 'app:1')?.replicas).toBe(3);
    expect(plan.requeueAfterMs).toBe(59_000);
  });

  it('abort while superseded: the new revision clears the abort and starts over', () => {
    const rollout = aRollout()
      .withReplicas(2)
      .withImage('app:3')
      .withSteps({ setWeight: 50 })
      .withStatus({
        stableRS: hashOf('app:1'),
        currentPodHash: hashOf('app:2'),
        abort: true,
        abortedAt: ago(5),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
      })
      .build();
    const plan = planOver(rollout, { 'app:1': 1, 'app:2': 1 });
    expect(plan.status.abort).toBeUndefined();
    expect(plan.status.abortedAt).toBeUndefined();
    expect(plan.status.phase).toBe('Progressing');
    expect(plan.status.currentPodHash).toBe(hashOf('app:3'));
  });

  it('retry (abort cleared) restarts from step 0 and deletes the failed runs so they can be recreated', () => {
    const rollout = anUpdate(2)
      .withSteps({ setWeight: 50 }, { analysis: { templates: [{ templateName: 't' }] } })
      .atStep(1)
      .withStatus({ abortedAt: ago(100), phase: 'Degraded', message: 'RolloutAborted: x' })
      .build();
    const plan = planRollout(
      rollout,
      observedWith(rollout, { 'app:1': 2, 'app:2': 0 })
        .withAnalysisRun({
          name: `web-${hashOf('app:2')}-2-1`,
          phase: 'Failed',
          labels: { [POD_TEMPLATE_HASH_LABEL]: hashOf('app:2') },
        })
        .build(),
      NOW,
    );
    expect(plan.status).toMatchObject({ currentStepIndex: 0, phase: 'Progressing' });
    expect(plan.status.abortedAt).toBeUndefined();
    expect(plan.actions).toContainEqual({ kind: 'deleteAnalysisRun', name: `web-${hashOf('app:2')}-2-1` });
    expect(plan.requeueAfterMs).toBe(0);
  });
});

describe('never throws', () => {
  it('an unsupported or invalid spec → InvalidSpec condition and no actions', () => {
    const cases: Array<[string, Rollout]> = [
      [
        'blueGreen',
        {
          ...aRollout().build(),
          spec: { ...aRollout().build().spec, strategy: { blueGreen: { activeService: '' } } },
        },
      ],
      ['bad maxSurge', aRollout().withCanary({ maxSurge: 'lots' }).build()],
      [
        'experiment step routing traffic to a template (weight)',
        aRollout()
          .withSteps({ experiment: { templates: [{ name: 'canary', specRef: 'canary', weight: 5 }] } })
          .build(),
      ],
      [
        'bad pause duration',
        aRollout()
          .withSteps({ pause: { duration: '5 parsecs' } })
          .build(),
      ],
    ];
    for (const [name, rollout] of cases) {
      const plan = planOver(rollout);
      expect(plan.actions, name).toEqual([]);
      expect(condition(plan, 'InvalidSpec'), name).toMatchObject({ status: 'True' });
      expect(plan.status.phase, name).toBe('Degraded');
    }
  });

  it('odd and half-written states plan without throwing', () => {
    const base = aRollout()
      .withImage('app:2')
      .withSteps({ setWeight: 50 }, { pause: { duration: 10 } })
      .build();
    const oddStatuses: Array<Record<string, unknown>> = [
      { currentStepIndex: 99, stableRS: hashOf('app:1') },
      { currentStepIndex: -3, stableRS: hashOf('app:1'), currentPodHash: hashOf('app:2') },
      { stableRS: 'gone', currentPodHash: hashOf('app:2') },
      {
        stableRS: hashOf('app:1'),
        currentPodHash: hashOf('app:2'),
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: 'x' }],
        currentStepIndex: 1,
      },
      {
        stableRS: hashOf('app:1'),
        currentPodHash: hashOf('app:2'),
        progress: { since: 'bad' },
        abortedAt: 'bad',
        abort: true,
        phase: 'Degraded',
        message: 'RolloutAborted: y',
      },
    ];
    for (const status of oddStatuses) {
      const rollout = { ...base, status };
      const plan = planOver(rollout, {
        'app:1': { replicas: 7, available: 3 },
        'app:2': { replicas: 2, available: 5, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '' } },
        'app:0': { replicas: 1, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: 'nope' } },
      });
      expect(condition(plan, 'InvalidSpec'), JSON.stringify(status)).toBeUndefined();
      for (const action of plan.actions) {
        if (action.kind === 'scaleReplicaSet')
          expect(action.annotations?.[SCALE_DOWN_DEADLINE_ANNOTATION]).not.toBe('');
      }
    }
    const garbage = planRollout(
      { metadata: { name: 'x' } } as unknown as Rollout,
      { rollout: {} } as never,
      NOW,
    );
    expect(garbage.actions).toEqual([]);
    expect(garbage.status.phase).toBe('Degraded');
  });
});
