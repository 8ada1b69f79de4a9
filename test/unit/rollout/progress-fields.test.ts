// The planner honours canary.replicaProgressThreshold, canary.scaleDownDelayRevisionLimit and spec.rollbackWindow:
// each case plans the same observed state with and without the field, and the outcome differs.
import { describe, it, expect } from 'vitest';
import type { CanaryStrategy, Rollout } from '../../../src/manifest/rollout.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  planRollout,
  type RolloutAction,
  type RolloutPlan,
} from '../../../src/rollout/index.ts';
import { replicaProgressTarget } from '../../../src/rollout/replica-progress-threshold.ts';
import { withinRollbackWindow } from '../../../src/rollout/rollback-window.ts';
import { validateManifests } from '../../../src/manifest/validate.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';
import { planRevision } from '../../../src/rollout/plan-revision.ts';
import { readRolloutContext } from '../../../src/rollout/rollout-context.ts';
import { anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();
const V1 = hashOf('app:1');
const V2 = hashOf('app:2');
const V3 = hashOf('app:3');

/** What status records once the replica ratio is 50/50 (the Services select both revisions). */
const halfWeights = {
  canary: { weight: 50, podTemplateHash: V2 },
  stable: { weight: 50, podTemplateHash: V1 },
};

type Sets = Record<string, number | ReplicaSetOptions>;
const planOver = (rollout: Rollout, sets: Sets, services: Record<string, string> = {}): RolloutPlan => {
  const observed = anObservedState(rollout);
  for (const [image, options] of Object.entries(sets))
    observed.withReplicaSet(image, typeof options === 'number' ? { replicas: options } : options);
  for (const [name, hash] of Object.entries(services))
    observed.withService(name, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
  return planRollout(rollout, observed.build(), NOW);
};
const scaleOf = (plan: RolloutPlan, image: string) =>
  plan.actions.find(
    (a): a is Extract<RolloutAction, { kind: 'scaleReplicaSet' }> =>
      a.kind === 'scaleReplicaSet' && a.name === `web-${hashOf(image)}`,
  );
const reasons = (plan: RolloutPlan) =>
  plan.actions.flatMap((a) => (a.kind === 'emitEvent' ? [a.reason] : []));

describe('canary.replicaProgressThreshold', () => {
  it.each([
    ['none', undefined, 4, 4],
    ['Percent 50', { type: 'Percent', value: 50 }, 4, 2],
    ['Percent 75 of 3 (2.25 rounds up)', { type: 'Percent', value: 75 }, 3, 3],
    ['Percent 90 of 10', { type: 'Percent', value: 90 }, 10, 9],
    ['Percent 1 of 1', { type: 'Percent', value: 1 }, 1, 1],
    ['Pod 1 of 2', { type: 'Pod', value: 1 }, 2, 1],
    ['Pods 5 of 2 (never more than wanted)', { type: 'Pods', value: 5 }, 2, 2],
    ['Percent 50 of 0', { type: 'Percent', value: 50 }, 0, 0],
  ] as const)('%s: %o of %i pods is reached at %i available', (_name, threshold, desired, want) => {
    expect(replicaProgressTarget(threshold, desired)).toBe(want);
  });

  /** app:1 → app:2 over 4 pods, at step 0 of [setWeight 50, pause], one of the 2 canary pods available. */
  const atHalf = (canary: Partial<CanaryStrategy>) =>
    aRollout()
      .withReplicas(4)
      .withImage('app:2')
      .withSteps({ setWeight: 50 }, { pause: {} })
      .withCanary(canary)
      .atStep(0)
      .withStatus({ canary: { weights: halfWeights } })
      .build();
  const half: Sets = { 'app:1': 2, 'app:2': { replicas: 2, available: 1 } };

  it('a setWeight step waits for all its canary pods without it, and goes on at the threshold with it', () => {
    const without = planOver(atHalf({}), half);
    expect(without.status).toMatchObject({ currentStepIndex: 0, phase: 'Progressing' });
    const withIt = planOver(atHalf({ replicaProgressThreshold: { type: 'Pod', value: 1 } }), half);
    expect(withIt.status).toMatchObject({ currentStepIndex: 1, phase: 'Paused' });
    expect(withIt.status.pauseConditions?.[0]?.reason).toBe('CanaryPauseStep');
    expect(reasons(withIt)).toContain('RolloutStepCompleted');
  });

  it('a Percent threshold below the available share goes on; one above it waits', () => {
    expect(
      planOver(atHalf({ replicaProgressThreshold: { type: 'Percent', value: 50 } }), half).status
        .currentStepIndex,
    ).toBe(1);
    expect(
      planOver(atHalf({ replicaProgressThreshold: { type: 'Percent', value: 51 } }), half).status
        .currentStepIndex,
    ).toBe(0);
  });

  /** Past the last step of [setWeight 50]: the canary runs 4 pods, 3 of them available. */
  const atEnd = (canary: Partial<CanaryStrategy>) =>
    aRollout()
      .withReplicas(4)
      .withImage('app:2')
      .withSteps({ setWeight: 50 })
      .withCanary(canary)
      .atStep(1)
      .build();
  const threeOfFour: Sets = { 'app:1': 0, 'app:2': { replicas: 4, available: 3 } };

  it('the promotion: the canary becomes the stable with 3 of 4 pods available at Percent 75, not without', () => {
    const without = planOver(atEnd({}), threeOfFour);
    expect(without.status.stableRS).toBe(V1);
    const withIt = planOver(atEnd({ replicaProgressThreshold: { type: 'Percent', value: 75 } }), threeOfFour);
    expect(withIt.status.stableRS).toBe(V2);
    expect(reasons(withIt)).toContain('RolloutCompleted');
  });

  it('the progress deadline is measured against the threshold: reached, its clock does not run', () => {
    const stuck = (canary: Partial<CanaryStrategy>) =>
      aRollout()
        .withReplicas(4)
        .withImage('app:2')
        .withSteps({ setWeight: 50 }, { pause: { duration: '1h' } })
        .withCanary(canary)
        .withProgressDeadline(60)
        .atStep(0)
        .withStatus({
          canary: { weights: halfWeights },
          progress: { since: ago(120), availableReplicas: 1, podTemplateHash: V2, target: 2 },
        })
        .build();
    expect(planOver(stuck({}), half).status.phase).toBe('Degraded');
    expect(planOver(stuck({ replicaProgressThreshold: { type: 'Pod', value: 1 } }), half).status.phase).toBe(
      'Paused',
    );
  });

  it('with a router, the step weight is sent once the threshold of its pods is available', () => {
    const routed = (canary: Partial<CanaryStrategy>) =>
      aRollout()
        .withReplicas(10)
        .withImage('app:2')
        .withSteps({ setWeight: 20 }, { pause: {} })
        .withCanary({
          canaryService: 'web-canary',
          stableService: 'web-stable',
          trafficRouting: { gatewayAPI: { httpRoute: 'web' } },
          ...canary,
        })
        .atStep(0)
        .withStatus({
          canary: {
            weights: {
              canary: { weight: 0, podTemplateHash: V2 },
              stable: { weight: 100, podTemplateHash: V1 },
            },
          },
        })
        .build();
    const sets: Sets = { 'app:1': 10, 'app:2': { replicas: 2, available: 1 } };
    const services = { 'web-canary': V2, 'web-stable': V1 };
    const sent = (plan: RolloutPlan) =>
      plan.actions.flatMap((a) => (a.kind === 'setTrafficWeights' ? [a.canaryWeight] : []));
    expect(sent(planOver(routed({}), sets, services))).toEqual([]);
    expect(
      sent(planOver(routed({ replicaProgressThreshold: { type: 'Percent', value: 50 } }), sets, services)),
    ).toEqual([20]);
  });
});

describe('canary.scaleDownDelayRevisionLimit', () => {
  /** Completed at app:3; app:2 (the stable before) and app:1 (the one before that) wait out their delay. */
  const completed = (canary: Partial<CanaryStrategy>) =>
    aRollout()
      .withReplicas(2)
      .withImage('app:3')
      .withCanary({ scaleDownDelaySeconds: 300, ...canary })
      .stableAtCurrent()
      .build();
  const sets: Sets = {
    'app:1': {
      replicas: 2,
      createdAt: ago(600),
      annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: later(60) },
    },
    'app:2': {
      replicas: 2,
      createdAt: ago(300),
      annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: later(240) },
    },
    'app:3': { replicas: 2, createdAt: ago(60) },
  };

  it('without it both old ReplicaSets keep their pods until their deadlines', () => {
    const plan = planOver(completed({}), sets);
    expect(scaleOf(plan, 'app:1')).toBeUndefined();
    expect(scaleOf(plan, 'app:2')).toBeUndefined();
    expect(plan.requeueAfterMs).toBe(60_000);
  });

  it('limit 1: the newest old ReplicaSet keeps its pods, the older one goes at once', () => {
    const plan = planOver(completed({ scaleDownDelayRevisionLimit: 1 }), sets);
    expect(scaleOf(plan, 'app:1')).toMatchObject({ replicas: 0 });
    expect(scaleOf(plan, 'app:2')).toBeUndefined();
  });

  it('limit 0: the stable a completion leaves is dated now, not after scaleDownDelaySeconds', () => {
    const atEnd = (canary: Partial<CanaryStrategy>) =>
      aRollout()
        .withReplicas(2)
        .withImage('app:2')
        .withSteps({ setWeight: 50 })
        .withCanary({ scaleDownDelaySeconds: 300, ...canary })
        .atStep(1)
        .build();
    const ready: Sets = { 'app:1': 2, 'app:2': 2 };
    const deadline = (plan: RolloutPlan) =>
      scaleOf(plan, 'app:1')?.annotations?.[SCALE_DOWN_DEADLINE_ANNOTATION];
    expect(deadline(planOver(atEnd({}), ready))).toBe(later(300));
    expect(deadline(planOver(atEnd({ scaleDownDelayRevisionLimit: 0 }), ready))).toBe(NOW.toISOString());
  });
});

describe('spec.rollbackWindow', () => {
  // Revisions app:1 (oldest), app:2, app:3 (the stable); the template goes back to an older one.
  const history: Sets = {
    'app:1': { replicas: 0, createdAt: ago(3000) },
    'app:2': { replicas: 0, createdAt: ago(2000) },
    'app:3': { replicas: 4, createdAt: ago(1000) },
  };
  const rollbackTo = (image: string, revisions?: number) => {
    const builder = aRollout()
      .withReplicas(4)
      .withImage(image)
      .withSteps({ setWeight: 25 }, { pause: {} }, { analysis: { templates: [{ templateName: 'smoke' }] } })
      .withCanary({ analysis: { templates: [{ templateName: 'background' }] } })
      .withStatus({ stableRS: V3, currentPodHash: V3, currentStepIndex: 3 });
    const rollout = builder.build();
    if (revisions !== undefined) rollout.spec.rollbackWindow = { revisions };
    return rollout;
  };
  const within = (image: string, revisions: number | undefined) => {
    const rollout = rollbackTo(image, revisions);
    const observed = anObservedState(rollout);
    for (const [img, options] of Object.entries(history))
      observed.withReplicaSet(img, typeof options === 'number' ? { replicas: options } : options);
    const context = readRolloutContext(rollout, observed.build(), NOW);
    return withinRollbackWindow(revisions, planRevision(context));
  };

  it.each([
    ['app:2', 1, true],
    ['app:1', 1, false],
    ['app:1', 2, true],
    ['app:2', 0, false],
    ['app:2', undefined, false],
  ] as const)('back to %s with revisions %s: within the window is %s', (image, revisions, want) => {
    expect(within(image, revisions)).toBe(want);
  });

  it('an Experiment’s ReplicaSet in between does not count', () => {
    const rollout = rollbackTo('app:1', 1);
    const observed = anObservedState(rollout);
    for (const [img, options] of Object.entries(history))
      observed.withReplicaSet(
        img,
        img === 'app:2' && typeof options !== 'number'
          ? { ...options, annotations: { 'experiment.argoproj.io/name': 'exp' } }
          : (options as ReplicaSetOptions),
      );
    const context = readRolloutContext(rollout, observed.build(), NOW);
    expect(withinRollbackWindow(1, planRevision(context))).toBe(true);
  });

  it('within the window the rollback goes straight to full: no step, no analysis, the old revision scaled to all pods', () => {
    const plan = planOver(rollbackTo('app:2', 1), history);
    expect(reasons(plan)).toContain('SkipSteps');
    expect(plan.status.currentStepIndex).toBe(3);
    expect(plan.status.promoteFull).toBeUndefined();
    expect(plan.actions.filter((a) => a.kind === 'createAnalysisRun')).toEqual([]);
    // maxSurge 25 % of 4: one pod over spec.replicas, so the whole canary goes up as far as it can.
    expect(scaleOf(plan, 'app:2')).toMatchObject({ replicas: 1 });
  });

  it('outside the window (or without one) the rollback walks the steps from 0 like any update', () => {
    for (const plan of [planOver(rollbackTo('app:1', 1), history), planOver(rollbackTo('app:2'), history)]) {
      expect(reasons(plan)).not.toContain('SkipSteps');
      expect(plan.status.currentStepIndex).toBe(0);
    }
  });

  it('a later pass of the rollback, its pods available, completes without pausing', () => {
    const rollout = rollbackTo('app:2', 1);
    rollout.status = { ...rollout.status, currentPodHash: V2, currentStepIndex: 3 };
    const plan = planOver(rollout, {
      ...history,
      'app:2': { replicas: 4, createdAt: ago(2000) },
      'app:3': { replicas: 1, createdAt: ago(1000) },
    });
    expect(plan.status).toMatchObject({ stableRS: V2, phase: 'Healthy' });
    expect(plan.status.pauseConditions).toBeUndefined();
  });
});

describe('spec.rollbackWindow, blue-green', () => {
  /** Blue-green back to app:2 over the stable app:3, promotion by hand and both analyses set. */
  const rollbackTo = (revisions: number | undefined, status: Record<string, unknown> = {}) => {
    const rollout = aRollout().withImage('app:2').build();
    rollout.spec.replicas = 2;
    rollout.spec.strategy = {
      blueGreen: {
        activeService: 'web',
        previewService: 'web-preview',
        autoPromotionEnabled: false,
        prePromotionAnalysis: { templates: [{ templateName: 'pre' }] },
        postPromotionAnalysis: { templates: [{ templateName: 'post' }] },
      },
    };
    if (revisions !== undefined) rollout.spec.rollbackWindow = { revisions };
    rollout.status = { stableRS: V3, currentPodHash: V2, phase: 'Progressing', ...status };
    return rollout;
  };
  const sets: Sets = {
    'app:1': { replicas: 0, createdAt: ago(3000) },
    'app:2': { replicas: 2, createdAt: ago(2000) },
    'app:3': { replicas: 2, createdAt: ago(1000) },
  };

  it('within the window the revision, fully up, is switched to without the pre-promotion analysis or the pause', () => {
    const services = { web: V3, 'web-preview': V2 };
    const fast = planOver(rollbackTo(1), sets, services);
    expect(fast.actions.filter((a) => a.kind === 'createAnalysisRun')).toEqual([]);
    expect(fast.status.pauseConditions).toBeUndefined();
    expect(fast.actions).toContainEqual(
      expect.objectContaining({ kind: 'patchServiceSelector', service: 'web', podTemplateHash: V2 }),
    );
    const slow = planOver(rollbackTo(undefined), sets, services);
    expect(slow.actions).toContainEqual(expect.objectContaining({ kind: 'createAnalysisRun' }));
    expect(slow.actions).not.toContainEqual(
      expect.objectContaining({ kind: 'patchServiceSelector', service: 'web' }),
    );
  });

  it('switched within the window, it completes without the post-promotion analysis', () => {
    const services = { web: V2, 'web-preview': V2 };
    const switched = {
      blueGreen: { activeSelector: V2, previewSelector: V2, scaleUpPreviewCheckPoint: true },
    };
    const fast = planOver(rollbackTo(1, switched), sets, services);
    expect(fast.status).toMatchObject({ stableRS: V2, phase: 'Healthy' });
    const slow = planOver(rollbackTo(undefined, switched), sets, services);
    expect(slow.status.stableRS).toBe(V3);
    expect(slow.actions).toContainEqual(expect.objectContaining({ kind: 'createAnalysisRun' }));
  });
});

describe('rollgate validate on the three fields', () => {
  const validate = (canary: string, spec = '') => {
    const text = ROLLOUT_YAML.replace('    canary:\n', `    canary:\n${canary}`).replace(
      '  replicas: 3\n',
      `  replicas: 3\n${spec}`,
    );
    const report = validateManifests([{ file: 'rollout.yaml', text }]);
    return {
      errors: report.objects.flatMap((o) =>
        o.errors.map((e) => `${e.line}:${e.col} ${e.path}: ${e.message}`),
      ),
      warnings: report.objects.flatMap((o) => o.warnings.map((e) => `${e.path}: ${e.message}`)),
    };
  };

  it('accepts them without an error or a warning', () => {
    expect(
      validate(
        '      replicaProgressThreshold: {type: Percent, value: 90}\n      scaleDownDelayRevisionLimit: 2\n',
        '  rollbackWindow:\n    revisions: 3\n',
      ),
    ).toEqual({ errors: [], warnings: [] });
    expect(validate('      replicaProgressThreshold: {type: Pod, value: 2}\n').errors).toEqual([]);
  });

  it('refuses an unknown threshold type, a value below 1 and a percentage above 100, at their lines', () => {
    const { errors } = validate('      replicaProgressThreshold: {type: percent, value: 0}\n');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^24:\d+ spec\.strategy\.canary\.replicaProgressThreshold\.type: /);
    expect(errors[1]).toMatch(
      /^24:\d+ spec\.strategy\.canary\.replicaProgressThreshold\.value: must be > 0, got 0/,
    );
    expect(validate('      replicaProgressThreshold: {type: Percent, value: 150}\n').errors).toEqual([
      expect.stringMatching(
        /^24:\d+ spec\.strategy\.canary\.replicaProgressThreshold\.value: must be at most 100 \(percent\), got 150$/,
      ),
    ]);
  });
});
