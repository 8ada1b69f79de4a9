// One table row per blue-green sub-step transition: given observed + spec + now → actions, state, findings, verdict.
import { describe, expect, it } from 'vitest';
import { autoPromotionPause } from '../../../src/rollout/blue-green/auto-promotion-pause.ts';
import { BLUE_GREEN_SUB_STEPS } from '../../../src/rollout/blue-green/blue-green-strategy.ts';
import { completeBlueGreen } from '../../../src/rollout/blue-green/complete-blue-green.ts';
import { fastRollback } from '../../../src/rollout/blue-green/fast-rollback.ts';
import { holdWhilePaused } from '../../../src/rollout/blue-green/hold-while-paused.ts';
import { keepGateRun } from '../../../src/rollout/blue-green/keep-gate-run.ts';
import { postPromotionAnalysis } from '../../../src/rollout/blue-green/post-promotion-analysis.ts';
import { prePromotionAnalysis } from '../../../src/rollout/blue-green/pre-promotion-analysis.ts';
import { recordPromotion } from '../../../src/rollout/blue-green/record-promotion.ts';
import { scaleDownOld } from '../../../src/rollout/blue-green/scale-down-old.ts';
import { scaleUpPreview } from '../../../src/rollout/blue-green/scale-up-preview.ts';
import { scaleUpPromoted } from '../../../src/rollout/blue-green/scale-up-promoted.ts';
import { switchActiveService } from '../../../src/rollout/blue-green/switch-active-service.ts';
import { switchPreviewService } from '../../../src/rollout/blue-green/switch-preview-service.ts';
import { waitForPreview } from '../../../src/rollout/blue-green/wait-for-preview.ts';
import type { Pass } from '../../../src/rollout/pass/pass.ts';
import { runSubSteps } from '../../../src/rollout/pass/sub-step.ts';
import { POD_TEMPLATE_HASH_LABEL, SCALE_DOWN_DEADLINE_ANNOTATION } from '../../../src/rollout/index.ts';
import type { BlueGreenStrategy } from '../../../src/manifest/rollout.ts';
import { anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aPass } from '../../builders/pass-builder.ts';
import { aRollout, hashOf, type RolloutBuilder } from '../../builders/rollout-builder.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const NOW = new Date(T0);
const ago = (seconds: number) => new Date(T0 - seconds * 1000).toISOString();
const V0 = hashOf('app:0');
const V1 = hashOf('app:1');
const V2 = hashOf('app:2');
const ANALYSIS = { templates: [{ templateName: 't' }] };

interface Given {
  rollout: RolloutBuilder;
  sets: Record<string, number | ReplicaSetOptions>;
  /** The hash each Service selects (default: both on the stable, app:1). */
  active?: string;
  preview?: string;
  runs?: Array<{
    name: string;
    phase: 'Running' | 'Successful' | 'Failed' | 'Inconclusive';
    terminated?: boolean;
  }>;
}

function passOf(given: Given): Pass {
  const observed = anObservedState(given.rollout.build())
    .withService('web', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: given.active ?? V1 })
    .withService('web-preview', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: given.preview ?? V1 });
  for (const [image, options] of Object.entries(given.sets))
    observed.withReplicaSet(image, typeof options === 'number' ? { replicas: options } : options);
  for (const run of given.runs ?? []) observed.withAnalysisRun(run);
  return aPass(observed.build(), NOW);
}

/** A blue-green rollout of 4 pods updating from app:1 (stable) to app:2, as the planner left it. */
const update = (fields: Partial<BlueGreenStrategy> = {}, status: Record<string, unknown> = {}) =>
  aRollout()
    .withReplicas(4)
    .withImage('app:2')
    .withBlueGreen(fields)
    .withStatus({ stableRS: V1, currentPodHash: V2, phase: 'Progressing', ...status });

/** status.blueGreen of a revision that passed its gates. */
const CHECKPOINT = { blueGreen: { scaleUpPreviewCheckPoint: true } };

const kinds = (pass: Pass) => [...pass.housekeeping, ...pass.actions].map((a) => a.kind);
const reasons = (pass: Pass) => pass.events.map((e) => e.reason);

interface Row {
  name: string;
  run: (pass: Pass) => Pass;
  given: Given;
  want: {
    kinds?: string[];
    /** The writes (not housekeeping), each matched as a subset of its fields. */
    actions?: Array<Record<string, unknown>>;
    events?: string[];
    state?: Partial<Pass['state']>;
    findings?: Partial<Pass['findings']>;
    verdict?: Partial<NonNullable<Pass['verdict']>> | 'none';
    wakeAtMs?: number[];
  };
}

const rows: Row[] = [
  {
    name: 'keep-gate-run: before the switch and the gates, the pre-promotion run is kept',
    run: keepGateRun,
    given: { rollout: update({ prePromotionAnalysis: ANALYSIS }), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { kinds: [], findings: { wantedRuns: [`web-${V2}-pre`] }, verdict: 'none' },
  },
  {
    name: 'keep-gate-run: once the gates are passed, no pre-promotion run is kept',
    run: keepGateRun,
    given: {
      rollout: update({ prePromotionAnalysis: ANALYSIS }, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': 4 },
    },
    want: { findings: { wantedRuns: [] } },
  },
  {
    name: 'keep-gate-run: after the switch, the post-promotion run is kept',
    run: keepGateRun,
    given: {
      rollout: update({ postPromotionAnalysis: ANALYSIS }, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
      preview: V2,
    },
    want: { findings: { wantedRuns: [`web-${V2}-post`] } },
  },
  {
    name: 'keep-gate-run: after the switch with promote --full, no run is kept',
    run: keepGateRun,
    given: {
      rollout: update({ postPromotionAnalysis: ANALYSIS }, { ...CHECKPOINT, promoteFull: true }),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
    },
    want: { findings: { wantedRuns: [] } },
  },
  {
    name: 'scale-up-preview: a missing ReplicaSet is created at previewReplicaCount',
    run: scaleUpPreview,
    given: { rollout: update({ previewReplicaCount: 1 }), sets: { 'app:1': 4 } },
    want: {
      actions: [{ kind: 'createReplicaSet', name: `web-${V2}`, replicas: 1 }],
      events: ['ReplicaSetCreated'],
      verdict: 'none',
    },
  },
  {
    name: 'scale-up-preview: a stable below spec.replicas is held there, the new one scaled to its preview count',
    run: scaleUpPreview,
    given: { rollout: update({ previewReplicaCount: 2 }), sets: { 'app:1': 3, 'app:2': 1 } },
    want: {
      actions: [
        { kind: 'scaleReplicaSet', name: `web-${V1}`, replicas: 4 },
        { kind: 'scaleReplicaSet', name: `web-${V2}`, replicas: 2 },
      ],
      events: [],
    },
  },
  {
    name: 'scale-up-preview: past the gates the new ReplicaSet goes to spec.replicas',
    run: scaleUpPreview,
    given: { rollout: update({ previewReplicaCount: 1 }, CHECKPOINT), sets: { 'app:1': 4, 'app:2': 1 } },
    want: { actions: [{ kind: 'scaleReplicaSet', name: `web-${V2}`, replicas: 4 }] },
  },
  {
    name: 'scale-up-preview: nothing above what it should run is scaled down',
    run: scaleUpPreview,
    given: { rollout: update({ previewReplicaCount: 1 }), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { kinds: [], events: [], verdict: 'none' },
  },
  {
    name: 'switch-preview-service: the preview Service selects the new ReplicaSet once it exists',
    run: switchPreviewService,
    given: { rollout: update(), sets: { 'app:1': 4, 'app:2': { replicas: 4, available: 0 } } },
    want: {
      actions: [{ kind: 'patchServiceSelector', service: 'web-preview', podTemplateHash: V2 }],
      verdict: 'none',
    },
  },
  {
    name: 'switch-preview-service: not in the pass that creates the ReplicaSet',
    run: switchPreviewService,
    given: { rollout: update(), sets: { 'app:1': 4 } },
    want: { kinds: [] },
  },
  {
    name: 'switch-preview-service: nothing when it already selects it',
    run: switchPreviewService,
    given: { rollout: update(), sets: { 'app:1': 4, 'app:2': 4 }, preview: V2 },
    want: { kinds: [] },
  },
  {
    name: 'scale-down-old: an old ReplicaSet past its scale-down deadline goes to 0',
    run: scaleDownOld,
    given: {
      rollout: update(),
      sets: {
        'app:0': { replicas: 2, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(1) } },
        'app:1': 4,
        'app:2': 4,
      },
    },
    want: { actions: [{ kind: 'scaleReplicaSet', name: `web-${V0}`, replicas: 0 }], verdict: 'none' },
  },
  {
    name: 'scale-down-old: never one the active Service selects',
    run: scaleDownOld,
    given: {
      rollout: update(),
      sets: {
        'app:0': { replicas: 2, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(1) } },
        'app:1': 4,
        'app:2': 4,
      },
      active: V0,
    },
    want: { kinds: [] },
  },
  {
    name: 'wait-for-preview: no new ReplicaSet yet: more replicas need to be updated',
    run: waitForPreview,
    given: { rollout: update(), sets: { 'app:1': 4 } },
    want: {
      kinds: [],
      verdict: {
        phase: 'Progressing',
        message: 'more replicas need to be updated',
        stableHash: V1,
        completed: false,
        blueGreen: { activeSelector: V1, previewSelector: V1 },
      },
    },
  },
  {
    name: 'wait-for-preview: below its preview count: more replicas need to be updated',
    run: waitForPreview,
    given: { rollout: update({ previewReplicaCount: 2 }), sets: { 'app:1': 4, 'app:2': 1 } },
    want: { verdict: { phase: 'Progressing', message: 'more replicas need to be updated' } },
  },
  {
    name: 'wait-for-preview: pods not all available; the checkpoint in status is kept',
    run: waitForPreview,
    given: {
      rollout: update({}, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': { replicas: 4, available: 3 } },
    },
    want: {
      verdict: {
        phase: 'Progressing',
        message: 'updated replicas are still becoming available',
        blueGreen: { activeSelector: V1, previewSelector: V1, scaleUpPreviewCheckPoint: true },
      },
    },
  },
  {
    name: 'wait-for-preview: at its preview count and available, the pass goes on',
    run: waitForPreview,
    given: { rollout: update({ previewReplicaCount: 1 }), sets: { 'app:1': 4, 'app:2': 1 } },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'hold-while-paused: spec.paused before the switch ends the pass Paused',
    run: holdWhilePaused,
    given: { rollout: update().withPaused(), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { kinds: [], verdict: { phase: 'Paused', message: 'manually paused', paused: true } },
  },
  {
    name: 'hold-while-paused: after the switch it holds nothing',
    run: holdWhilePaused,
    given: {
      rollout: update({}, CHECKPOINT).withPaused(),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
    },
    want: { verdict: 'none' },
  },
  {
    name: 'fast-rollback: a revision still up in its scale-down delay loses its deadline and skips the gates',
    run: fastRollback,
    given: {
      rollout: update({ prePromotionAnalysis: ANALYSIS, autoPromotionEnabled: false }),
      sets: {
        'app:1': 4,
        'app:2': { replicas: 4, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(-20) } },
      },
    },
    want: {
      actions: [
        {
          kind: 'scaleReplicaSet',
          name: `web-${V2}`,
          replicas: 4,
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: null },
        },
      ],
      events: ['FastRollback'],
      verdict: {
        phase: 'Progressing',
        message: 'switching active Service web',
        blueGreen: { activeSelector: V1, previewSelector: V1, scaleUpPreviewCheckPoint: true },
      },
    },
  },
  {
    name: 'fast-rollback: not for a revision without a deadline (a fresh preview)',
    run: fastRollback,
    given: { rollout: update(), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { kinds: [], events: [], verdict: 'none' },
  },
  {
    name: 'fast-rollback: not while some of its pods are unavailable',
    run: fastRollback,
    given: {
      rollout: update(),
      sets: {
        'app:1': 4,
        'app:2': { replicas: 4, available: 3, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(-20) } },
      },
    },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'pre-promotion-analysis: a missing run is created and waited for',
    run: prePromotionAnalysis,
    given: { rollout: update({ prePromotionAnalysis: ANALYSIS }), sets: { 'app:1': 4, 'app:2': 4 } },
    want: {
      actions: [{ kind: 'createAnalysisRun', name: `web-${V2}-pre`, background: false }],
      verdict: {
        phase: 'Progressing',
        message: `waiting for AnalysisRun web-${V2}-pre`,
        blueGreen: { activeSelector: V1, previewSelector: V1 },
      },
    },
  },
  {
    name: 'pre-promotion-analysis: a run stopped before it finished is deleted, to be replaced',
    run: prePromotionAnalysis,
    given: {
      rollout: update({ prePromotionAnalysis: ANALYSIS }),
      sets: { 'app:1': 4, 'app:2': 4 },
      runs: [{ name: `web-${V2}-pre`, phase: 'Running', terminated: true }],
    },
    want: { kinds: ['deleteAnalysisRun'], verdict: { phase: 'Progressing' } },
  },
  {
    name: 'pre-promotion-analysis: a Successful run lets the pass go on',
    run: prePromotionAnalysis,
    given: {
      rollout: update({ prePromotionAnalysis: ANALYSIS }),
      sets: { 'app:1': 4, 'app:2': 4 },
      runs: [{ name: `web-${V2}-pre`, phase: 'Successful' }],
    },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'pre-promotion-analysis: past the gates it is not run again',
    run: prePromotionAnalysis,
    given: {
      rollout: update({ prePromotionAnalysis: ANALYSIS }, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': 4 },
    },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'auto-promotion-pause: without auto-promotion the pause starts, with no timer',
    run: autoPromotionPause,
    given: { rollout: update({ autoPromotionEnabled: false }), sets: { 'app:1': 4, 'app:2': 4 } },
    want: {
      state: {
        pauseConditions: [{ reason: 'BlueGreenPause', startTime: NOW.toISOString() }],
        controllerPause: true,
      },
      events: ['RolloutPaused'],
      wakeAtMs: [],
      verdict: {
        phase: 'Paused',
        message: 'BlueGreenPause',
        paused: true,
      },
    },
  },
  {
    name: 'auto-promotion-pause: autoPromotionSeconds not yet over: Paused, woken when it ends',
    run: autoPromotionPause,
    given: {
      rollout: update(
        { autoPromotionSeconds: 30 },
        { controllerPause: true, pauseConditions: [{ reason: 'BlueGreenPause', startTime: ago(10) }] },
      ),
      sets: { 'app:1': 4, 'app:2': 4 },
    },
    want: { events: [], wakeAtMs: [T0 + 20_000], verdict: { phase: 'Paused' } },
  },
  {
    name: 'auto-promotion-pause: autoPromotionSeconds over: the pass goes on',
    run: autoPromotionPause,
    given: {
      rollout: update(
        { autoPromotionSeconds: 30 },
        { controllerPause: true, pauseConditions: [{ reason: 'BlueGreenPause', startTime: ago(31) }] },
      ),
      sets: { 'app:1': 4, 'app:2': 4 },
    },
    want: { verdict: 'none' },
  },
  {
    name: 'auto-promotion-pause: promoted (condition removed, controllerPause kept): the pass goes on',
    run: autoPromotionPause,
    given: {
      rollout: update({ autoPromotionEnabled: false }, { controllerPause: true, pauseConditions: [] }),
      sets: { 'app:1': 4, 'app:2': 4 },
    },
    want: { events: [], verdict: 'none' },
  },
  {
    name: 'auto-promotion-pause: immediate auto-promotion (the default) does not pause',
    run: autoPromotionPause,
    given: { rollout: update(), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { state: { controllerPause: false }, verdict: 'none' },
  },
  {
    name: 'record-promotion: the pass that passes the gates lifts the pauses and says so',
    run: recordPromotion,
    given: {
      rollout: update(
        { autoPromotionSeconds: 30 },
        { controllerPause: true, pauseConditions: [{ reason: 'BlueGreenPause', startTime: ago(31) }] },
      ),
      sets: { 'app:1': 4, 'app:2': 4 },
    },
    want: {
      kinds: [],
      state: { pauseConditions: [], controllerPause: false },
      events: ['RolloutPromoted'],
      verdict: 'none',
    },
  },
  {
    name: 'record-promotion: once past the gates, nothing',
    run: recordPromotion,
    given: { rollout: update({}, CHECKPOINT), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { events: [], verdict: 'none' },
  },
  {
    name: 'scale-up-promoted: a promoted preview is scaled to spec.replicas before it takes traffic',
    run: scaleUpPromoted,
    given: { rollout: update({ previewReplicaCount: 1 }), sets: { 'app:1': 4, 'app:2': 1 } },
    want: {
      actions: [{ kind: 'scaleReplicaSet', name: `web-${V2}`, replicas: 4 }],
      verdict: {
        phase: 'Progressing',
        message: 'more replicas need to be updated',
        blueGreen: { activeSelector: V1, previewSelector: V1, scaleUpPreviewCheckPoint: true },
      },
    },
  },
  {
    name: 'scale-up-promoted: at spec.replicas, until all are available',
    run: scaleUpPromoted,
    given: { rollout: update({}, CHECKPOINT), sets: { 'app:1': 4, 'app:2': { replicas: 4, available: 3 } } },
    want: {
      kinds: [],
      verdict: { phase: 'Progressing', message: 'updated replicas are still becoming available' },
    },
  },
  {
    name: 'scale-up-promoted: all available: the pass goes on',
    run: scaleUpPromoted,
    given: { rollout: update({}, CHECKPOINT), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'switch-active-service: the active Service switches to the promoted revision, checkpoint recorded',
    run: switchActiveService,
    given: { rollout: update({}, CHECKPOINT), sets: { 'app:1': 4, 'app:2': 4 }, preview: V2 },
    want: {
      actions: [{ kind: 'patchServiceSelector', service: 'web', podTemplateHash: V2 }],
      events: ['SwitchedActiveService'],
      verdict: {
        phase: 'Progressing',
        message: 'switching active Service web',
        stableHash: V1,
        blueGreen: { activeSelector: V2, previewSelector: V2, scaleUpPreviewCheckPoint: true },
      },
    },
  },
  {
    name: 'switch-active-service: once switched, nothing',
    run: switchActiveService,
    given: { rollout: update({}, CHECKPOINT), sets: { 'app:1': 4, 'app:2': 4 }, active: V2 },
    want: { kinds: [], events: [], verdict: 'none' },
  },
  {
    name: 'post-promotion-analysis: after the switch a missing run is created and waited for',
    run: postPromotionAnalysis,
    given: {
      rollout: update({ postPromotionAnalysis: ANALYSIS }, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
      preview: V2,
    },
    want: {
      actions: [{ kind: 'createAnalysisRun', name: `web-${V2}-post`, background: false }],
      verdict: {
        phase: 'Progressing',
        message: `waiting for AnalysisRun web-${V2}-post`,
        blueGreen: { activeSelector: V2, previewSelector: V2, scaleUpPreviewCheckPoint: true },
      },
    },
  },
  {
    name: 'post-promotion-analysis: a Successful run lets the pass go on',
    run: postPromotionAnalysis,
    given: {
      rollout: update({ postPromotionAnalysis: ANALYSIS }, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
      runs: [{ name: `web-${V2}-post`, phase: 'Successful' }],
    },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'post-promotion-analysis: promote --full skips it',
    run: postPromotionAnalysis,
    given: {
      rollout: update({ postPromotionAnalysis: ANALYSIS }, { ...CHECKPOINT, promoteFull: true }),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
    },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'complete: switched and judged, the revision becomes stable; the old one keeps its pods for the delay',
    run: completeBlueGreen,
    given: {
      rollout: update({}, { ...CHECKPOINT, controllerPause: true }),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
      preview: V2,
    },
    want: {
      actions: [
        {
          kind: 'scaleReplicaSet',
          name: `web-${V1}`,
          replicas: 4,
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: new Date(T0 + 30_000).toISOString() },
        },
      ],
      events: ['RolloutCompleted'],
      state: { pauseConditions: [], controllerPause: false, promoteFull: false, progress: undefined },
      wakeAtMs: [T0 + 30_000],
      verdict: {
        phase: 'Healthy',
        completed: true,
        stableHash: V2,
        blueGreen: { activeSelector: V2, previewSelector: V2 },
      },
    },
  },
  {
    name: 'complete: a revision limit of 0 dates the old stable now',
    run: completeBlueGreen,
    given: {
      rollout: update({ scaleDownDelayRevisionLimit: 0 }, CHECKPOINT),
      sets: { 'app:1': 4, 'app:2': 4 },
      active: V2,
    },
    want: { kinds: ['scaleReplicaSet'], wakeAtMs: [T0], verdict: { phase: 'Healthy' } },
  },
  {
    name: 'complete: an old stable already dated keeps its deadline and is woken at it',
    run: completeBlueGreen,
    given: {
      rollout: update({}, CHECKPOINT),
      sets: {
        'app:1': { replicas: 4, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: ago(-10) } },
        'app:2': 4,
      },
      active: V2,
    },
    want: { kinds: [], wakeAtMs: [T0 + 10_000], verdict: { phase: 'Healthy' } },
  },
  {
    name: 'complete: not before the switch',
    run: completeBlueGreen,
    given: { rollout: update({}, CHECKPOINT), sets: { 'app:1': 4, 'app:2': 4 } },
    want: { kinds: [], events: [], verdict: 'none' },
  },
];

describe('blue-green sub-steps', () => {
  for (const row of rows) {
    it(row.name, () => {
      const before = passOf(row.given);
      const after = row.run(before);
      const { want } = row;
      if (want.kinds !== undefined) expect(kinds(after)).toEqual(want.kinds);
      if (want.actions !== undefined) expect(after.actions).toMatchObject(want.actions);
      if (want.events !== undefined) expect(reasons(after)).toEqual(want.events);
      if (want.state !== undefined) expect(after.state).toMatchObject(want.state);
      if (want.findings !== undefined) expect(after.findings).toMatchObject(want.findings);
      if (want.verdict === 'none') expect(after.verdict).toBeUndefined();
      else if (want.verdict !== undefined) expect(after.verdict).toMatchObject(want.verdict);
      if (want.wakeAtMs !== undefined) expect(after.wakeAtMs).toEqual(want.wakeAtMs);
      // Sub-steps never modify the pass they are given.
      expect(before.actions).toHaveLength(0);
      expect(before.verdict).toBeUndefined();
    });
  }

  it('the blue-green table ends every pass with a verdict', () => {
    const pass = runSubSteps(BLUE_GREEN_SUB_STEPS, passOf({ rollout: update(), sets: { 'app:1': 4 } }));
    expect(pass.verdict.phase).toBe('Progressing');
    expect(kinds(pass)).toEqual(['createReplicaSet']);
  });

  it('the table stops at the first sub-step that ends the pass: a pause, then the promotion, a pass each', () => {
    const rollout = update({ autoPromotionEnabled: false });
    const paused = runSubSteps(BLUE_GREEN_SUB_STEPS, passOf({ rollout, sets: { 'app:1': 4, 'app:2': 4 } }));
    expect(paused.verdict.phase).toBe('Paused');
    expect(reasons(paused)).toEqual(['RolloutPaused']);
    const promoted = runSubSteps(
      BLUE_GREEN_SUB_STEPS,
      passOf({
        rollout: update({ autoPromotionEnabled: false }, { controllerPause: true, pauseConditions: [] }),
        sets: { 'app:1': 4, 'app:2': 4 },
        preview: V2,
      }),
    );
    expect(reasons(promoted)).toEqual(['RolloutPromoted', 'SwitchedActiveService']);
    expect(promoted.actions).toMatchObject([{ kind: 'patchServiceSelector', service: 'web' }]);
    expect(promoted.verdict.blueGreen).toMatchObject({ scaleUpPreviewCheckPoint: true });
  });
});
