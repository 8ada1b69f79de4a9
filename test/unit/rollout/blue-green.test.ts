// Tests for the blue-green strategy: single passes as table rows, and whole updates in the in-memory world,
// every pass checked against the invariants (active only on available pods, never scaled away, Healthy last).
import { describe, expect, it } from 'vitest';
import {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  planRollout,
  type RolloutAction,
  type RolloutPlan,
} from '../../../src/rollout/index.ts';
import type { BlueGreenStrategy, Rollout } from '../../../src/manifest/rollout.ts';
import { InMemoryWorld, type WorldOptions } from '../../builders/in-memory-world.ts';
import { anObservedState } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import { followsAtOnce } from '../../builders/run-until.ts';
import { MAX_PASSES_PER_TRIAL, postRunOf, runBlueGreenTrials } from './blue-green-trials.ts';

const NOW = new Date('2026-01-01T00:10:00Z');
const V1 = hashOf('app:1');
const V2 = hashOf('app:2');
const V3 = hashOf('app:3');
const V0 = hashOf('app:0');

function blueGreen(fields: Partial<BlueGreenStrategy> = {}, image = 'app:1'): Rollout {
  const rollout = aRollout().withImage(image).build();
  rollout.spec.strategy = {
    blueGreen: { activeService: 'web', previewService: 'web-preview', ...fields },
  };
  return rollout;
}

/** A blue-green rollout updating from app:1 (stable) to app:2, as the planner left it, with `status` on top. */
function updating(fields: Partial<BlueGreenStrategy>, status: Record<string, unknown> = {}): Rollout {
  const rollout = blueGreen(fields, 'app:2');
  rollout.status = { stableRS: V1, currentPodHash: V2, phase: 'Progressing', ...status };
  return rollout;
}

function sel(hash: string): Record<string, string> {
  return { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash };
}

function writes(plan: RolloutPlan): RolloutAction[] {
  return plan.actions.filter((action) => action.kind !== 'emitEvent');
}

function reasons(plan: RolloutPlan): string[] {
  return plan.actions.flatMap((action) => (action.kind === 'emitEvent' ? [action.reason] : []));
}

interface Row {
  name: string;
  rollout: Rollout;
  observed: (rollout: Rollout) => ReturnType<typeof anObservedState>;
  now?: Date;
  wantWrites: unknown[];
  wantPhase: string;
  wantRequeueAfterMs?: number | undefined;
  wantStatus?: Record<string, unknown>;
  wantEvents?: string[];
}

const ROWS: Row[] = [
  {
    name: 'new revision: its ReplicaSet is created at previewReplicaCount; active stays on stable',
    rollout: updating({ previewReplicaCount: 1 }, { currentPodHash: V1 }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V1)),
    wantWrites: [expect.objectContaining({ kind: 'createReplicaSet', name: `web-${V2}`, replicas: 1 })],
    wantPhase: 'Progressing',
    wantEvents: ['RolloutUpdated', 'ReplicaSetCreated'],
    wantStatus: { stableRS: V1, currentPodHash: V2, blueGreen: { activeSelector: V1, previewSelector: V1 } },
  },
  {
    name: 'preview ReplicaSet exists: the preview Service selects it, the active one does not move',
    rollout: updating({ previewReplicaCount: 1 }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 1, available: 0 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V1)),
    wantWrites: [
      { kind: 'patchServiceSelector', service: 'web-preview', resourceVersion: '5', podTemplateHash: V2 },
    ],
    wantPhase: 'Progressing',
    wantRequeueAfterMs: 5_000,
    wantStatus: {
      message: 'updated replicas are still becoming available',
      blueGreen: { activeSelector: V1, previewSelector: V2 },
    },
  },
  {
    name: 'preview available, autoPromotionEnabled false: paused with BlueGreenPause, nothing switched',
    rollout: updating({ autoPromotionEnabled: false }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [],
    wantPhase: 'Paused',
    wantRequeueAfterMs: undefined,
    wantEvents: ['RolloutPaused'],
    wantStatus: {
      pauseConditions: [{ reason: 'BlueGreenPause', startTime: NOW.toISOString() }],
      controllerPause: true,
      conditions: expect.arrayContaining([expect.objectContaining({ type: 'Paused', status: 'True' })]),
    },
  },
  {
    name: 'preview waiting for promotion: ready/available/HPAReplicas count the active ReplicaSet only (as Argo)',
    rollout: updating({ autoPromotionEnabled: false, previewReplicaCount: 1 }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 1 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [],
    wantPhase: 'Paused',
    wantRequeueAfterMs: undefined,
    wantEvents: ['RolloutPaused'],
    wantStatus: {
      // The preview's pod runs (replicas, updatedReplicas) but serves nobody: not ready capacity.
      replicas: 5,
      updatedReplicas: 1,
      readyReplicas: 4,
      availableReplicas: 4,
      HPAReplicas: 4,
      selector: `app=web,${POD_TEMPLATE_HASH_LABEL}=${V1}`,
      conditions: expect.arrayContaining([expect.objectContaining({ type: 'Available', status: 'True' })]),
    },
  },
  {
    name: 'promoted (pause condition removed by `rollgate promote`): the active Service switches',
    rollout: updating({ autoPromotionEnabled: false }, { controllerPause: true }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [{ kind: 'patchServiceSelector', service: 'web', resourceVersion: '5', podTemplateHash: V2 }],
    wantPhase: 'Progressing',
    wantEvents: ['RolloutPromoted', 'SwitchedActiveService'],
    wantStatus: {
      controllerPause: undefined,
      blueGreen: { activeSelector: V2, previewSelector: V2, scaleUpPreviewCheckPoint: true },
    },
  },
  {
    name: 'autoPromotionSeconds not yet elapsed: still paused, requeued at its end',
    rollout: updating(
      { autoPromotionSeconds: 60 },
      {
        controllerPause: true,
        pauseConditions: [{ reason: 'BlueGreenPause', startTime: '2026-01-01T00:09:30Z' }],
      },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [],
    wantPhase: 'Paused',
    wantRequeueAfterMs: 30_000,
  },
  {
    name: 'autoPromotionSeconds elapsed: promoted and switched in the same pass',
    rollout: updating(
      { autoPromotionSeconds: 60 },
      {
        controllerPause: true,
        pauseConditions: [{ reason: 'BlueGreenPause', startTime: '2026-01-01T00:09:00Z' }],
      },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [{ kind: 'patchServiceSelector', service: 'web', resourceVersion: '5', podTemplateHash: V2 }],
    wantPhase: 'Progressing',
    wantStatus: { pauseConditions: undefined },
  },
  {
    name: 'preview count reached and gates passed: scaled to full before any switch',
    rollout: updating({ previewReplicaCount: 1 }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 1 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [{ kind: 'scaleReplicaSet', name: `web-${V2}`, resourceVersion: '10', replicas: 4 }],
    wantPhase: 'Progressing',
    wantStatus: { blueGreen: { activeSelector: V1, previewSelector: V2, scaleUpPreviewCheckPoint: true } },
  },
  {
    name: 'scaled to full but not all available: no switch yet',
    rollout: updating({ previewReplicaCount: 1 }, { blueGreen: { scaleUpPreviewCheckPoint: true } }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4, available: 3 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [],
    wantPhase: 'Progressing',
    wantRequeueAfterMs: 5_000,
  },
  {
    name: 'pre-promotion analysis missing: created; no pause, no switch while it runs',
    rollout: updating({ prePromotionAnalysis: { templates: [{ templateName: 'smoke' }] } }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [
      expect.objectContaining({
        kind: 'createAnalysisRun',
        name: `web-${V2}-2-pre`,
        labels: expect.objectContaining({ 'rollgate.dev/analysis-type': 'PrePromotion' }),
      }),
    ],
    wantPhase: 'Progressing',
    wantStatus: { message: `waiting for AnalysisRun web-${V2}-2-pre` },
  },
  {
    name: 'pre-promotion analysis failed: the abort is recorded first, nothing else written',
    rollout: updating({ prePromotionAnalysis: { templates: [{ templateName: 'smoke' }] } }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2))
        .withAnalysisRun({ name: `web-${V2}-2-pre`, phase: 'Failed', message: 'error rate 9%' }),
    wantWrites: [],
    wantPhase: 'Degraded',
    wantRequeueAfterMs: 0,
    wantEvents: ['RolloutAborted'],
    wantStatus: { abort: true, abortedAt: NOW.toISOString() },
  },
  {
    name: 'switched: post-promotion analysis created; the previous ReplicaSet keeps its pods',
    rollout: updating(
      { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      { blueGreen: { scaleUpPreviewCheckPoint: true } },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2)),
    wantWrites: [
      expect.objectContaining({
        kind: 'createAnalysisRun',
        name: `web-${V2}-2-post`,
        labels: expect.objectContaining({ 'rollgate.dev/analysis-type': 'PostPromotion' }),
      }),
    ],
    wantPhase: 'Progressing',
    wantStatus: { stableRS: V1 },
  },
  {
    name: 'post-promotion analysis inconclusive after the switch: abort recorded',
    rollout: updating(
      { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      { blueGreen: { scaleUpPreviewCheckPoint: true } },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2))
        .withAnalysisRun({ name: `web-${V2}-2-post`, phase: 'Inconclusive' }),
    wantWrites: [],
    wantPhase: 'Degraded',
    wantRequeueAfterMs: 0,
    wantStatus: { abort: true },
  },
  {
    name: 'aborted after the switch: the active Service goes back to the stable, alone in its pass',
    rollout: updating(
      { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      {
        abort: true,
        abortedAt: '2026-01-01T00:09:59Z',
        phase: 'Degraded',
        message: 'RolloutAborted: AnalysisRun failed',
      },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2)),
    wantWrites: [{ kind: 'patchServiceSelector', service: 'web', resourceVersion: '5', podTemplateHash: V1 }],
    wantPhase: 'Degraded',
    wantEvents: ['ActiveServiceReverted'],
  },
  {
    name: 'aborted, active on stable: preview back to stable; the aborted ReplicaSet waits for its delay',
    rollout: updating(
      {},
      { abort: true, abortedAt: '2026-01-01T00:09:50Z', phase: 'Degraded', message: 'RolloutAborted: x' },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [
      { kind: 'patchServiceSelector', service: 'web-preview', resourceVersion: '5', podTemplateHash: V1 },
    ],
    wantPhase: 'Degraded',
    wantRequeueAfterMs: 20_000,
  },
  {
    name: 'aborted past abortScaleDownDelaySeconds: the aborted ReplicaSet goes to 0',
    rollout: updating(
      {},
      { abort: true, abortedAt: '2026-01-01T00:09:00Z', phase: 'Degraded', message: 'RolloutAborted: x' },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V1)),
    wantWrites: [{ kind: 'scaleReplicaSet', name: `web-${V2}`, resourceVersion: '10', replicas: 0 }],
    wantPhase: 'Degraded',
  },
  {
    name: 'post-promotion analysis passed: the revision becomes stable, the previous one dated for scale-down',
    rollout: updating(
      { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      { blueGreen: { scaleUpPreviewCheckPoint: true } },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2))
        .withAnalysisRun({ name: `web-${V2}-2-post`, phase: 'Successful', terminated: true }),
    wantWrites: [
      {
        kind: 'scaleReplicaSet',
        name: `web-${V1}`,
        resourceVersion: '10',
        replicas: 4,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '2026-01-01T00:10:30.000Z' },
      },
    ],
    wantPhase: 'Healthy',
    wantRequeueAfterMs: 30_000,
    wantEvents: ['RolloutCompleted'],
    wantStatus: { stableRS: V2, blueGreen: { activeSelector: V2, previewSelector: V2 } },
  },
  {
    name: 'supersede during preview: the intermediate ReplicaSet goes to 0, the newest is created',
    rollout: (() => {
      const r = blueGreen({}, 'app:3');
      r.status = { stableRS: V1, currentPodHash: V2, phase: 'Progressing' };
      return r;
    })(),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4, createdAt: '2026-01-01T00:05:00Z' })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2))
        .withAnalysisRun({ name: `web-${V2}-2-pre`, phase: 'Running' }),
    wantWrites: [
      { kind: 'terminateAnalysisRun', name: `web-${V2}-2-pre` },
      expect.objectContaining({ kind: 'createReplicaSet', name: `web-${V3}`, replicas: 4 }),
      { kind: 'scaleReplicaSet', name: `web-${V2}`, resourceVersion: '10', replicas: 0 },
    ],
    wantPhase: 'Progressing',
    wantEvents: ['RolloutSuperseded', 'ReplicaSetCreated'],
  },
  {
    name: 'superseded after its switch: the intermediate keeps serving until the newest is switched to',
    rollout: (() => {
      const r = blueGreen({}, 'app:3');
      r.status = { stableRS: V1, currentPodHash: V2, phase: 'Progressing' };
      return r;
    })(),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4, createdAt: '2026-01-01T00:05:00Z' })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2)),
    wantWrites: [expect.objectContaining({ kind: 'createReplicaSet', name: `web-${V3}` })],
    wantPhase: 'Progressing',
  },
  {
    name: 'scaleDownDelayRevisionLimit 1, switched: the stable left takes the one place, an older dated one goes',
    rollout: updating(
      { scaleDownDelayRevisionLimit: 1, postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      { blueGreen: { scaleUpPreviewCheckPoint: true } },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:0', {
          replicas: 4,
          createdAt: '2025-12-31T00:00:00Z',
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '2026-01-01T00:10:20Z' },
        })
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2))
        .withAnalysisRun({ name: `web-${V2}-3-post`, phase: 'Running' }),
    wantWrites: [
      {
        kind: 'scaleReplicaSet',
        name: `web-${V0}`,
        resourceVersion: '10',
        replicas: 0,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: null },
      },
    ],
    wantPhase: 'Progressing',
  },
  {
    name: 'scaleDownDelayRevisionLimit 2 before the switch: a dated old ReplicaSet keeps its pods',
    rollout: updating({ scaleDownDelayRevisionLimit: 2 }),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:0', {
          replicas: 4,
          createdAt: '2025-12-31T00:00:00Z',
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '2026-01-01T00:10:20Z' },
        })
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4, available: 2 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V2)),
    wantWrites: [],
    wantPhase: 'Progressing',
    wantRequeueAfterMs: 5_000,
  },
  {
    name: 'fast rollback to a revision still up in its delay: no gates, its deadline removed, switch next',
    rollout: (() => {
      const r = blueGreen({ autoPromotionEnabled: false }, 'app:1');
      r.status = { stableRS: V2, currentPodHash: V2, phase: 'Healthy' };
      return r;
    })(),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', {
          replicas: 4,
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '2026-01-01T00:10:20Z' },
        })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2)),
    wantWrites: [
      { kind: 'patchServiceSelector', service: 'web-preview', resourceVersion: '5', podTemplateHash: V1 },
      {
        kind: 'scaleReplicaSet',
        name: `web-${V1}`,
        resourceVersion: '10',
        replicas: 4,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: null },
      },
    ],
    wantPhase: 'Progressing',
    wantEvents: ['RolloutUpdated', 'FastRollback'],
    wantStatus: { blueGreen: { activeSelector: V2, previewSelector: V1, scaleUpPreviewCheckPoint: true } },
  },
  {
    name: 'a template that comes back after a supersede: its runs from the earlier attempt are deleted',
    rollout: (() => {
      const r = blueGreen({ prePromotionAnalysis: { templates: [{ templateName: 'smoke' }] } }, 'app:2');
      r.status = { stableRS: V1, currentPodHash: V3, phase: 'Progressing' };
      return r;
    })(),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4, createdAt: '2026-01-01T00:01:00Z' })
        .withReplicaSet('app:3', { replicas: 0, createdAt: '2026-01-01T00:05:00Z' })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V3))
        .withAnalysisRun({ name: `web-${V2}-3-pre`, phase: 'Running', terminated: true }),
    wantWrites: [
      { kind: 'deleteAnalysisRun', name: `web-${V2}-3-pre` },
      { kind: 'patchServiceSelector', service: 'web-preview', resourceVersion: '5', podTemplateHash: V2 },
    ],
    wantPhase: 'Progressing',
    wantStatus: { message: `waiting for AnalysisRun web-${V2}-3-pre` },
  },
  {
    name: 'a wanted gate run stopped before it finished is replaced, not waited on forever',
    rollout: updating(
      { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      {
        blueGreen: { scaleUpPreviewCheckPoint: true },
      },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 4 })
        .withService('web', sel(V2))
        .withService('web-preview', sel(V2))
        .withAnalysisRun({ name: `web-${V2}-2-post`, phase: 'Running', terminated: true }),
    wantWrites: [{ kind: 'deleteAnalysisRun', name: `web-${V2}-2-post` }],
    wantPhase: 'Progressing',
  },
  {
    name: 'antiAffinity preferred: the new ReplicaSet keeps away from the stable pods, its hash unchanged',
    rollout: updating(
      { antiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: { weight: 40 } } },
      { currentPodHash: V1 },
    ),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V1)),
    wantWrites: [
      expect.objectContaining({
        kind: 'createReplicaSet',
        name: `web-${V2}`,
        podTemplateHash: V2,
        template: expect.objectContaining({
          spec: expect.objectContaining({
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 40,
                    podAffinityTerm: {
                      labelSelector: {
                        matchExpressions: [{ key: POD_TEMPLATE_HASH_LABEL, operator: 'In', values: [V1] }],
                      },
                      namespaces: ['default'],
                      topologyKey: 'kubernetes.io/hostname',
                    },
                  },
                ],
              },
            },
          }),
        }),
      }),
    ],
    wantPhase: 'Progressing',
  },
  {
    name: 'antiAffinity required: appended to the template’s own rules',
    rollout: (() => {
      const r = updating(
        { antiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } },
        { currentPodHash: V1 },
      );
      (r.spec.template.spec as Record<string, unknown>)['affinity'] = {
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] },
      };
      return r;
    })(),
    observed: (r) =>
      anObservedState(r)
        .withReplicaSet('app:1', { replicas: 4 })
        .withService('web', sel(V1))
        .withService('web-preview', sel(V1)),
    wantWrites: [
      expect.objectContaining({
        kind: 'createReplicaSet',
        template: expect.objectContaining({
          spec: expect.objectContaining({
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [
                  { topologyKey: 'zone' },
                  expect.objectContaining({ topologyKey: 'kubernetes.io/hostname' }),
                ],
              },
            },
          }),
        }),
      }),
    ],
    wantPhase: 'Progressing',
  },
];

describe('blue-green: one pass (table)', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const plan = planRollout(row.rollout, row.observed(row.rollout).build(), row.now ?? NOW);
      expect(writes(plan)).toEqual(row.wantWrites);
      expect(plan.status.phase).toBe(row.wantPhase);
      if ('wantRequeueAfterMs' in row) expect(plan.requeueAfterMs).toBe(row.wantRequeueAfterMs);
      const wantStatus = Object.entries(row.wantStatus ?? {});
      expect(plan.status).toMatchObject(Object.fromEntries(wantStatus.filter(([, v]) => v !== undefined)));
      for (const [key, value] of wantStatus)
        if (value === undefined) expect(plan.status, key).not.toHaveProperty(key);
      if (row.wantEvents !== undefined) expect(reasons(plan)).toEqual(row.wantEvents);
    });
  }
});

// ---------------------------------------------------------------------------------------------------
// Whole updates in the in-memory world, invariants checked after every pass.

const SERVICES = [
  { name: 'web', selector: { app: 'web' } },
  { name: 'web-preview', selector: { app: 'web' } },
];

function activeHash(world: InMemoryWorld): string | undefined {
  return world.services.get('web')?.selector[POD_TEMPLATE_HASH_LABEL];
}

function setOf(world: InMemoryWorld, hash: string) {
  return [...world.sets.values()].find((set) => set.rs.podTemplateHash === hash);
}

/**
 * The invariants, once the first revision is live: the active Service never selects a ReplicaSet with no
 * available pods or one scaled to 0; Healthy at a revision only once the active Service selects it and its
 * post-promotion analysis (when configured) succeeded.
 */
function checkInvariants(world: InMemoryWorld, postAnalysis: boolean): void {
  const active = activeHash(world);
  expect(active, 'the active Service selects a revision').toBeDefined();
  const set = setOf(world, active as string);
  expect(set?.rs.replicas ?? 0, `active ReplicaSet ${active} scaled to 0`).toBeGreaterThan(0);
  expect(
    set?.rs.status.availableReplicas ?? 0,
    `active ReplicaSet ${active} has no available pod`,
  ).toBeGreaterThan(0);
  const status = world.rollout.status ?? {};
  if (status.phase === 'Healthy') {
    const current = status.currentPodHash as string;
    expect(active, 'Healthy only once the active Service selects the revision').toBe(current);
    if (postAnalysis && current !== V1)
      expect(postRunOf(world, current)?.phase, 'Healthy only after post-promotion').toBe('Successful');
  }
}

function drive(
  world: InMemoryWorld,
  until: (world: InMemoryWorld) => boolean,
  postAnalysis = false,
  maxMs = 600_000,
): RolloutPlan[] {
  const plans: RolloutPlan[] = [];
  const end = world.now + maxMs;
  while (world.now <= end) {
    const plan = world.reconcile();
    plans.push(plan);
    checkInvariants(world, postAnalysis);
    if (until(world)) return plans;
    if (!followsAtOnce(world)) world.advance(1000);
  }
  throw new Error(`condition not reached; status: ${JSON.stringify(world.rollout.status)}`);
}

function liveWorld(fields: Partial<BlueGreenStrategy>, options: Partial<WorldOptions> = {}): InMemoryWorld {
  const world = new InMemoryWorld({ rollout: blueGreen(fields), services: SERVICES, ...options });
  for (let i = 0; i < 50 && world.rollout.status?.phase !== 'Healthy'; i++) {
    world.reconcile();
    if (!followsAtOnce(world)) world.advance(1000);
  }
  expect(world.rollout.status?.phase).toBe('Healthy');
  expect(activeHash(world)).toBe(V1);
  return world;
}

describe('blue-green: the first revision', () => {
  it('points the active Service at it and records status.blueGreen.activeSelector, as Argo does', () => {
    const world = new InMemoryWorld({ rollout: blueGreen({}), services: SERVICES });
    const first = world.reconcile();
    // The first pass creates the ReplicaSet and points both Services at it: nothing else can serve.
    expect(first.actions.filter((a) => a.kind === 'patchServiceSelector')).toEqual([
      expect.objectContaining({ service: 'web', podTemplateHash: V1 }),
      expect.objectContaining({ service: 'web-preview', podTemplateHash: V1 }),
    ]);
    expect(first.status.blueGreen).toMatchObject({ activeSelector: V1 });
    for (let i = 0; i < 50 && world.rollout.status?.phase !== 'Healthy'; i++) {
      world.reconcile();
      if (!followsAtOnce(world)) world.advance(1000);
    }
    expect(world.rollout.status).toMatchObject({
      phase: 'Healthy',
      stableRS: V1,
      currentPodHash: V1,
      blueGreen: { activeSelector: V1, previewSelector: V1 },
    });
    expect(activeHash(world)).toBe(V1);
  });
});

describe('blue-green: whole updates', () => {
  it('preview count, manual promotion, switch, post-promotion, old ReplicaSet scaled down after its delay', () => {
    const world = liveWorld({
      previewReplicaCount: 1,
      autoPromotionEnabled: false,
      postPromotionAnalysis: { templates: [{ templateName: 'soak' }] },
    });
    world.setImage('app:2');
    drive(world, (w) => w.rollout.status?.phase === 'Paused', true);
    expect(setOf(world, V2)?.rs.replicas).toBe(1);
    expect(world.services.get('web-preview')?.selector[POD_TEMPLATE_HASH_LABEL]).toBe(V2);
    expect(activeHash(world)).toBe(V1);
    // Nothing moves while paused, however long.
    world.advance(3_600_000);
    drive(world, () => true, true);
    expect(world.rollout.status?.phase).toBe('Paused');
    expect(activeHash(world)).toBe(V1);

    world.patchStatus({ pauseConditions: null }); // rollgate promote
    drive(world, (w) => activeHash(w) === V2, true);
    expect(setOf(world, V2)?.rs.replicas).toBe(4);
    expect(world.rollout.status?.phase).toBe('Progressing');
    const switchedAt = world.now;
    drive(world, (w) => w.rollout.status?.phase === 'Healthy', true);
    expect(world.rollout.status?.stableRS).toBe(V2);
    expect(world.now - switchedAt).toBeGreaterThanOrEqual(5_000); // the post-promotion analysis ran
    expect(setOf(world, V1)?.rs.replicas).toBe(4); // inside its scale-down delay
    drive(world, (w) => setOf(w, V1)?.rs.replicas === 0, true);
    expect(world.now - switchedAt).toBeGreaterThanOrEqual(30_000);
  });

  it('post-promotion failure: the active Service returns to the previous ReplicaSet, Degraded, preview scaled down later', () => {
    const world = liveWorld(
      { postPromotionAnalysis: { templates: [{ templateName: 'soak' }] } },
      { analysisResult: (name) => (name.endsWith('-post') ? 'Failed' : 'Successful') },
    );
    world.setImage('app:2');
    drive(world, (w) => activeHash(w) === V2, true);
    drive(world, (w) => w.rollout.status?.abort === true && activeHash(w) === V1, true);
    expect(world.rollout.status?.phase).toBe('Degraded');
    expect(world.rollout.status?.stableRS).toBe(V1);
    expect(setOf(world, V1)?.rs.replicas).toBe(4);
    const abortedAt = Date.parse(world.rollout.status?.abortedAt as string);
    drive(world, (w) => setOf(w, V2)?.rs.replicas === 0, true);
    expect(world.now - abortedAt).toBeGreaterThanOrEqual(30_000);
    expect(world.services.get('web-preview')?.selector[POD_TEMPLATE_HASH_LABEL]).toBe(V1);
    expect(world.rollout.status?.phase).toBe('Degraded');
  });

  it('abort before the switch: active never leaves stable; retry starts the gates over', () => {
    const world = liveWorld({ autoPromotionEnabled: false });
    world.setImage('app:2');
    drive(world, (w) => w.rollout.status?.phase === 'Paused');
    world.patchStatus({ abort: true }); // rollgate abort
    drive(world, (w) => setOf(w, V2)?.rs.replicas === 0);
    expect(activeHash(world)).toBe(V1);
    world.patchStatus({ abort: null }); // rollgate retry
    drive(world, (w) => w.rollout.status?.phase === 'Paused');
    expect(activeHash(world)).toBe(V1);
    expect(setOf(world, V2)?.rs.replicas).toBe(4);
  });

  it('supersede during pre-promotion analysis: intermediate scaled down, its run terminated, newest promoted', () => {
    const world = liveWorld(
      { prePromotionAnalysis: { templates: [{ templateName: 'smoke' }] } },
      { analysisMs: 60_000 },
    );
    world.setImage('app:2');
    drive(world, (w) => w.runs.has(`web-${V2}-2-pre`));
    world.setImage('app:3');
    drive(world, (w) => setOf(w, V2)?.rs.replicas === 0);
    expect(world.runs.get(`web-${V2}-2-pre`)?.terminated).toBe(true);
    drive(world, (w) => w.rollout.status?.phase === 'Healthy' && w.rollout.status?.stableRS === V3);
    expect(activeHash(world)).toBe(V3);
  });

  it('fast rollback: back to the previous image inside its scale-down delay switches without new pods or a pause', () => {
    const world = liveWorld({ autoPromotionEnabled: false, scaleDownDelaySeconds: 600 });
    world.setImage('app:2');
    drive(world, (w) => w.rollout.status?.phase === 'Paused');
    world.patchStatus({ pauseConditions: null });
    drive(world, (w) => w.rollout.status?.phase === 'Healthy' && w.rollout.status?.stableRS === V2);
    const podsOfV1 = world.podAges().filter((pod) => pod.hash === V1);
    world.setImage('app:1');
    drive(world, (w) => w.rollout.status?.phase === 'Healthy' && w.rollout.status?.stableRS === V1);
    expect(activeHash(world)).toBe(V1);
    expect(world.podAges().filter((pod) => pod.hash === V1)).toEqual(podsOfV1);
    expect(world.events.map((e) => e.reason)).toContain('FastRollback');
    expect(setOf(world, V1)?.rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]).toBeUndefined();
  });

  it('with 30 % of writes refused (409) and a supersede at any point, the invariants hold and it converges', () => {
    for (let seed = 1; seed <= 20; seed++) {
      let state = seed;
      const random = (): number => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        return state / 2_147_483_648;
      };
      let failing = false;
      const world = liveWorld(
        { previewReplicaCount: 2, prePromotionAnalysis: { templates: [{ templateName: 'smoke' }] } },
        { fail: () => failing && random() < 0.3 },
      );
      failing = true;
      world.setImage('app:2');
      const supersedeAfter = 1 + Math.floor(random() * 30);
      let passes = 0;
      drive(world, () => {
        passes += 1;
        if (passes === supersedeAfter) world.setImage('app:3');
        return passes > supersedeAfter;
      });
      drive(world, (w) => w.rollout.status?.phase === 'Healthy' && w.rollout.status?.stableRS === V3);
      expect(activeHash(world), `seed ${seed}`).toBe(V3);
      expect(world.conflicts, `seed ${seed}: writes were refused`).toBeGreaterThan(0);
    }
  });

  it('randomized: revisions, aborts, retries, promotions and failing analyses in random order, 30 % refused writes', () => {
    const result = runBlueGreenTrials({ trials: 25, seed: 1 });
    expect(result.violations).toEqual([]);
    expect(result.failures).toEqual([]);
    expect(result.conflicts).toBeGreaterThan(25);
    expect(result.maxPasses).toBeLessThan(MAX_PASSES_PER_TRIAL);
  });
});
