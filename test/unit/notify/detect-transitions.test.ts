import { describe, expect, it } from 'vitest';
import { detectTransitions, type NotificationIntent } from '../../../src/notify/detect-transitions.ts';

type Status = Parameters<typeof detectTransitions>[1];

const steady: Status = { phase: 'Healthy', currentPodHash: 'aaa', stableRS: 'aaa', currentStepIndex: 3 };

const rows: Array<{ name: string; before: Status | undefined; after: Status; want: NotificationIntent[] }> = [
  { name: 'nothing changed', before: steady, after: { ...steady }, want: [] },
  {
    name: 'a new revision starts a canary',
    before: steady,
    after: { ...steady, phase: 'Progressing', currentPodHash: 'bbb', currentStepIndex: 0 },
    want: [{ trigger: 'on-rollout-updated', revision: 'bbb', step: '-' }],
  },
  {
    name: 'a step completes',
    before: { ...steady, phase: 'Progressing', currentPodHash: 'bbb', currentStepIndex: 0 },
    after: { ...steady, phase: 'Progressing', currentPodHash: 'bbb', currentStepIndex: 1 },
    want: [{ trigger: 'on-rollout-step-completed', revision: 'bbb', step: '0' }],
  },
  {
    name: 'two steps in one pass are two notifications',
    before: { ...steady, currentPodHash: 'bbb', currentStepIndex: 1 },
    after: { ...steady, currentPodHash: 'bbb', currentStepIndex: 3 },
    want: [
      { trigger: 'on-rollout-step-completed', revision: 'bbb', step: '1' },
      { trigger: 'on-rollout-step-completed', revision: 'bbb', step: '2' },
    ],
  },
  {
    name: 'a pause step pauses',
    before: { ...steady, phase: 'Progressing', currentPodHash: 'bbb', currentStepIndex: 1 },
    after: { ...steady, phase: 'Paused', currentPodHash: 'bbb', currentStepIndex: 1 },
    want: [{ trigger: 'on-rollout-paused', revision: 'bbb', step: '1' }],
  },
  {
    name: 'the canary becomes stable',
    before: { ...steady, phase: 'Progressing', currentPodHash: 'bbb', currentStepIndex: 3 },
    after: { ...steady, phase: 'Healthy', currentPodHash: 'bbb', stableRS: 'bbb', currentStepIndex: 3 },
    want: [{ trigger: 'on-rollout-completed', revision: 'bbb', step: '-' }],
  },
  {
    name: 'the first revision of a new Rollout is updated and completed',
    before: undefined,
    after: { phase: 'Healthy', currentPodHash: 'aaa', stableRS: 'aaa' },
    want: [
      { trigger: 'on-rollout-updated', revision: 'aaa', step: '-' },
      { trigger: 'on-rollout-completed', revision: 'aaa', step: '-' },
    ],
  },
  {
    name: 'an abort',
    before: { ...steady, phase: 'Progressing', currentPodHash: 'bbb', currentStepIndex: 2 },
    after: { ...steady, phase: 'Degraded', currentPodHash: 'bbb', currentStepIndex: 2, abort: true },
    want: [{ trigger: 'on-rollout-aborted', revision: 'bbb', step: '2' }],
  },
  {
    name: 'an abort seen again is not a new abort',
    before: { ...steady, currentPodHash: 'bbb', abort: true },
    after: { ...steady, currentPodHash: 'bbb', abort: true, phase: 'Degraded' },
    want: [],
  },
  {
    name: 'a step analysis run starts, then fails',
    before: { ...steady, currentPodHash: 'bbb', canary: {} },
    after: {
      ...steady,
      currentPodHash: 'bbb',
      canary: { currentStepAnalysisRunStatus: { name: 'run-1', status: 'Running' } },
    },
    want: [{ trigger: 'on-analysis-run-running', revision: 'bbb', step: 'run-1' }],
  },
  {
    name: 'a background run fails',
    before: {
      ...steady,
      currentPodHash: 'bbb',
      canary: { currentBackgroundAnalysisRunStatus: { name: 'bg', status: 'Running' } },
    },
    after: {
      ...steady,
      currentPodHash: 'bbb',
      canary: { currentBackgroundAnalysisRunStatus: { name: 'bg', status: 'Failed' } },
    },
    want: [{ trigger: 'on-analysis-run-failed', revision: 'bbb', step: 'bg' }],
  },
  {
    name: 'a blue-green pre-promotion run errors',
    before: {
      ...steady,
      currentPodHash: 'bbb',
      blueGreen: { prePromotionAnalysisRunStatus: { name: 'pre', status: 'Running' } },
    },
    after: {
      ...steady,
      currentPodHash: 'bbb',
      blueGreen: { prePromotionAnalysisRunStatus: { name: 'pre', status: 'Error' } },
    },
    want: [{ trigger: 'on-analysis-run-error', revision: 'bbb', step: 'pre' }],
  },
  {
    name: 'a successful run fires nothing',
    before: { ...steady, canary: { currentStepAnalysisRunStatus: { name: 'r', status: 'Running' } } },
    after: { ...steady, canary: { currentStepAnalysisRunStatus: { name: 'r', status: 'Successful' } } },
    want: [],
  },
];

describe('detectTransitions', () => {
  it.each(rows)('$name', ({ before, after, want }) => {
    expect(detectTransitions(before, after)).toEqual(want);
  });

  it('reports each ReplicaSet the pass scaled, keyed by its target', () => {
    expect(detectTransitions(steady, steady, [{ name: 'web-bbb', replicas: 2 }])).toEqual([
      { trigger: 'on-scaling-replica-set', revision: 'aaa', step: 'web-bbb=2' },
    ]);
  });
});
