// planChange: a new image runs the steps (replica counts, weights, pauses, analysis, minimum time); other changes are not a revision.
import { describe, expect, it } from 'vitest';
import { planChange, type ChangePlan } from '../../../src/plan/plan-change.ts';
import { formatDuration, formatPlanMarkdown, formatPlanText } from '../../../src/plan/plan-report-text.ts';
import { hashOf } from '../../builders/rollout-builder.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const STEPS = [
  { setWeight: 20 },
  { pause: { duration: '10m' } },
  { setWeight: 50 },
  { analysis: { templates: [{ templateName: 'success-rate' }] } },
  { pause: {} },
  { setWeight: 80 },
  { pause: { duration: 60 } },
];

const rollout = (image: string, replicas = 5) =>
  aRollout('web')
    .withReplicas(replicas)
    .withImage(image)
    .withSteps(...STEPS)
    .build();

describe('planChange', () => {
  it('a new image: each step with its canary/stable replicas, weight, pause and analysis, and the minimum time', () => {
    const plan = planChange(rollout('app:2'), rollout('app:1'));
    expect(plan).toMatchObject({
      change: 'new-revision',
      images: { before: ['app:1'], after: ['app:2'] },
      podTemplateHash: { before: hashOf('app:1'), after: hashOf('app:2') },
      specChanges: [],
      strategy: 'Canary',
      // 10 min + 1 min of timed pauses; the indefinite pause and the analysis count as no time.
      minPromotionMs: 660_000,
    });
    const hash = hashOf('app:2');
    expect(plan.steps).toEqual([
      {
        index: 0,
        action: 'setWeight: 20',
        canary: 1,
        stable: 4,
        weight: 20,
        analysisRuns: [],
        doneAfterMs: 0,
      },
      {
        index: 1,
        action: 'pause: 10m',
        canary: 1,
        stable: 4,
        weight: 20,
        pauseMs: 600_000,
        analysisRuns: [],
        doneAfterMs: 600_000,
      },
      // maxSurge 25 % of 5 rounds up to 2 extra pods: the canary reaches 3 before stable gives one up.
      {
        index: 2,
        action: 'setWeight: 50',
        canary: 3,
        stable: 3,
        weight: 50,
        analysisRuns: [],
        doneAfterMs: 600_000,
      },
      {
        index: 3,
        action: 'analysis: success-rate',
        canary: 3,
        stable: 3,
        weight: 50,
        analysisRuns: [`web-${hash}-2-3`],
        doneAfterMs: 600_000,
      },
      {
        index: 4,
        action: 'pause (until promoted)',
        canary: 3,
        stable: 3,
        weight: 50,
        untilPromoted: true,
        analysisRuns: [],
        doneAfterMs: 600_000,
      },
      {
        index: 5,
        action: 'setWeight: 80',
        canary: 4,
        stable: 1,
        weight: 80,
        analysisRuns: [],
        doneAfterMs: 600_000,
      },
      {
        index: 6,
        action: 'pause: 60',
        canary: 4,
        stable: 1,
        weight: 80,
        pauseMs: 60_000,
        analysisRuns: [],
        doneAfterMs: 660_000,
      },
    ]);
  });

  it('a replicas-only change is not a new revision: no step runs', () => {
    const plan = planChange(rollout('app:1', 8), rollout('app:1', 5));
    expect(plan).toMatchObject({ change: 'not-a-new-revision', specChanges: ['replicas: 5 → 8'], steps: [] });
    expect(plan.minPromotionMs).toBeUndefined();
    expect(formatPlanText([{ file: 'web.yaml', against: 'HEAD~1', plan }])).toBe(
      [
        'rollout default/web (web.yaml, against HEAD~1)',
        `  not a new revision (pod template unchanged, ${hashOf('app:1')} → ${hashOf('app:1')}): replicas: 5 → 8; no step runs`,
        '',
      ].join('\n'),
    );
  });

  it('the same spec is unchanged; a Rollout absent before starts at full scale without steps', () => {
    expect(planChange(rollout('app:1'), rollout('app:1')).change).toBe('unchanged');
    expect(planChange(rollout('app:1'), null)).toMatchObject({
      change: 'new-rollout',
      steps: [],
      minPromotionMs: 0,
    });
  });

  it('a new image and more replicas: the steps run at the new scale, and the other change is listed', () => {
    const plan = planChange(rollout('app:2', 10), rollout('app:1', 5));
    expect(plan.change).toBe('new-revision');
    expect(plan.specChanges).toEqual(['replicas: 5 → 10']);
    expect(plan.steps[0]).toMatchObject({ canary: 2, stable: 8, weight: 20 });
  });

  it('without a previous version, a change of the template is assumed', () => {
    const plan = planChange(rollout('app:2'), undefined);
    expect(plan.change).toBe('new-revision');
    expect(plan.podTemplateHash.before).toBeUndefined();
    expect(plan.steps).toHaveLength(STEPS.length);
    expect(plan.minPromotionMs).toBe(660_000);
  });

  it('a blue-green rollout: no steps, the minimum time is the auto-promotion delay', () => {
    const blueGreen = (image: string) => {
      const built = aRollout('bg').withReplicas(2).withImage(image).build();
      built.spec.strategy = { blueGreen: { activeService: 'bg-active', autoPromotionSeconds: 30 } };
      return built;
    };
    const plan = planChange(blueGreen('app:2'), blueGreen('app:1'));
    expect(plan).toMatchObject({ change: 'new-revision', strategy: 'BlueGreen', steps: [] });
    expect(plan.minPromotionMs).toBe(30_000);
    expect(plan.manualPromotions).toBe(0);
    const manual = blueGreen('app:2');
    manual.spec.strategy = { blueGreen: { activeService: 'bg-active', autoPromotionEnabled: false } };
    const byHand = planChange(manual, blueGreen('app:1'));
    expect(byHand.manualPromotions).toBe(1);
    expect(formatPlanText([{ file: 'bg.yaml', against: 'HEAD', plan: byHand }])).toContain(
      'full promotion after at least 0s (pods ready at once, analysis successful at once; plus the wait for `rollgate promote`)',
    );
  });
});

describe('plan output', () => {
  const plan: ChangePlan = planChange(rollout('app:2'), rollout('app:1'));

  it('markdown: a heading, the verdict and one table row per step, fit for a pull-request comment', () => {
    const markdown = formatPlanMarkdown([{ file: 'deploy/web.yaml', against: 'origin/main', plan }]);
    const lines = markdown.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      '### Rollout `default/web`',
      '',
      `default/web (deploy/web.yaml, against origin/main): new revision: app:1 → app:2 (pod template ${hashOf('app:1')} → ${hashOf('app:2')})`,
    ]);
    expect(lines).toContain('| Step | Action | Canary | Stable | Weight | Pause | Analysis | Done after |');
    expect(lines).toContain('| 1 | pause: 10m | 1 | 4 | 20% | 10m |  | 10m |');
    expect(lines).toContain(
      `| 3 | analysis: success-rate | 3 | 3 | 50% |  | web-${hashOf('app:2')}-2-3 | 10m |`,
    );
    expect(lines).toContain('| 4 | pause (until promoted) | 3 | 3 | 50% | until promoted |  | 10m |');
    expect(lines.filter((line) => line.startsWith('| '))).toHaveLength(2 + STEPS.length);
    expect(markdown).toContain(
      '**Full promotion after at least 11m** (pods ready at once, analysis successful at once; plus the wait for `rollgate promote` at step 4).',
    );
  });

  it('text: a padded table and the minimum time', () => {
    const text = formatPlanText([{ file: 'web.yaml', against: 'cluster', plan }]);
    expect(text).toContain(
      '  STEP  ACTION                  CANARY  STABLE  WEIGHT  PAUSE           ANALYSIS',
    );
    expect(text).toMatch(/\n {2}0 {5}setWeight: 20 {11}1 {7}4 {7}20% {5}\s+0s\n/);
    expect(text).toContain('  full promotion after at least 11m (');
  });

  it.each([
    [0, '0s'],
    [45_000, '45s'],
    [600_000, '10m'],
    [5_400_000, '1h30m'],
    [5_430_000, '1h30m'],
    [183_600_000, '2d3h'],
  ])('formatDuration(%i) = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
