// What `rollgate status` shows for an observed rollout: steps marked, roles, failing pods with reasons.
import { describe, expect, it } from 'vitest';
import {
  buildRolloutView,
  formatRolloutView,
  pauseRemainingSeconds,
} from '../../../src/views/rollout-view.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';

function observed(): ObservedState {
  return {
    rollout: {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'app:2' }] },
        },
        strategy: {
          canary: {
            steps: [{ setWeight: 25 }, { pause: {} }, { setWeight: 75 }, { pause: { duration: '30s' } }],
          },
        },
      },
      status: {
        phase: 'Paused',
        currentStepIndex: 1,
        stableRS: 'aaa',
        currentPodHash: 'bbb',
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-01-01T00:00:00Z' }],
        canary: {
          weights: {
            canary: { weight: 25, podTemplateHash: 'bbb' },
            stable: { weight: 75, podTemplateHash: 'aaa' },
          },
        },
      },
    },
    replicaSets: [
      rs('web-aaa', 'aaa', 3, 3),
      rs('web-bbb', 'bbb', 1, 0),
      {
        ...rs('web-old', 'old', 0, 0),
        annotations: { 'rollgate.dev/scale-down-deadline': '2026-01-01T00:01:00Z' },
      },
    ],
    pods: [
      {
        name: 'web-bbb-x1',
        podTemplateHash: 'bbb',
        phase: 'Pending',
        ready: false,
        containers: [
          {
            name: 'app',
            image: 'app:2',
            waitingReason: 'ImagePullBackOff',
            waitingMessage: 'Back-off pulling image "app:2"',
            restartCount: 0,
          },
        ],
      },
      { name: 'web-aaa-y1', podTemplateHash: 'aaa', phase: 'Running', ready: true, containers: [] },
    ],
    services: [],
    analysisRuns: [{ name: 'web-bbb-2', phase: 'Running', labels: {}, terminated: false }],
  };
}

function rs(name: string, hash: string, replicas: number, available: number) {
  return {
    name,
    uid: name,
    resourceVersion: '1',
    podTemplateHash: hash,
    labels: {},
    annotations: {},
    replicas,
    status: { replicas, readyReplicas: available, availableReplicas: available },
    template: {},
    creationTimestamp: '2026-01-01T00:00:00Z',
    controlledByRollout: true,
  };
}

describe('buildRolloutView', () => {
  it('marks steps, names ReplicaSet roles and lists failing pods with their reason', () => {
    const view = buildRolloutView(observed());
    expect(view.steps.map((s) => `${s.index}:${s.state}:${s.description}`)).toEqual([
      '0:done:setWeight: 25',
      '1:current:pause (until promoted)',
      '2:pending:setWeight: 75',
      '3:pending:pause: 30s',
    ]);
    expect(view.replicaSets.map((r) => `${r.name}:${r.role}`)).toEqual([
      'web-bbb:canary',
      'web-aaa:stable',
      'web-old:old',
    ]);
    expect(view.weights).toEqual({ canary: 25, stable: 75 });
    expect(view.paused).toBe(true);
    expect(view.failingPods).toEqual([
      {
        name: 'web-bbb-x1',
        podTemplateHash: 'bbb',
        container: 'app',
        reason: 'ImagePullBackOff',
        message: 'Back-off pulling image "app:2"',
        restartCount: 0,
      },
    ]);
    expect(view.analysisRuns).toEqual([{ name: 'web-bbb-2', phase: 'Running' }]);
  });

  it('prints the current step marked and the reasons a user acts on', () => {
    const text = formatRolloutView(buildRolloutView(observed()));
    expect(text).toContain('▶ 1: pause (until promoted)');
    expect(text).toContain('✔ 0: setWeight: 25');
    expect(text).toContain('CanaryPauseStep since 2026-01-01T00:00:00Z');
    expect(text).toContain('web-bbb-x1 app: ImagePullBackOff: Back-off pulling image "app:2"');
    expect(text).toContain('web-old  old     ready 0/0  available 0  scale-down at 2026-01-01T00:01:00Z');
    expect(text).toContain('web-bbb-2  Running');
  });

  it('marks the step that was running when a progress deadline aborted the update', () => {
    const state = observed();
    state.rollout.status = {
      ...state.rollout.status,
      phase: 'Degraded',
      abort: true,
      currentStepIndex: 0,
      pauseConditions: [],
      message: 'RolloutAborted: ProgressDeadlineExceeded: ReplicaSet "web-bbb" has timed out progressing',
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "web-bbb" has timed out progressing.',
        },
      ],
    };
    const view = buildRolloutView(state);
    expect(view.steps.map((step) => step.state)).toEqual(['aborted', 'pending', 'pending', 'pending']);
    const text = formatRolloutView(view);
    expect(text).toContain('✘ 0: setWeight: 25   ← aborted here (ProgressDeadlineExceeded)');
    expect(text).not.toContain('▶');
  });

  it('shows a restart: how many stable and canary pods are still older than restartAt, then done', () => {
    const state = observed();
    state.rollout.spec.restartAt = '2026-01-01T00:05:00Z';
    state.pods = state.pods.map((pod, index) => ({
      ...pod,
      creationTimestamp: index === 0 ? '2026-01-01T00:06:00Z' : '2026-01-01T00:01:00Z',
    }));
    const pending = buildRolloutView(state);
    expect(pending.restart).toEqual({
      restartAt: '2026-01-01T00:05:00Z',
      state: 'pending',
      podsToRestart: 1,
    });
    expect(formatRolloutView(pending)).toContain(
      'Restart:    pods created before 2026-01-01T00:05:00Z are being replaced (1 left)',
    );
    state.rollout.status = { ...state.rollout.status, restartedAt: '2026-01-01T00:05:00Z' };
    expect(formatRolloutView(buildRolloutView(state))).toContain(
      'Restart:    done (every pod created after 2026-01-01T00:05:00Z)',
    );
    expect(buildRolloutView(observed()).restart).toBeUndefined();
    const scheduled = buildRolloutView(state, new Date('2026-01-01T00:04:00Z'));
    expect(scheduled.restart?.state).toBe('done');
    state.rollout.status = { ...state.rollout.status, restartedAt: undefined };
    expect(formatRolloutView(buildRolloutView(state, new Date('2026-01-01T00:04:00Z')))).toContain(
      'Restart:    scheduled for 2026-01-01T00:05:00Z',
    );
  });

  it('a blue-green rollout: where the active and preview Services point, the preview ReplicaSet, the pause', () => {
    const state = observed();
    state.rollout.spec.strategy = { blueGreen: { activeService: 'web', previewService: 'web-preview' } };
    state.rollout.status = {
      phase: 'Paused',
      stableRS: 'aaa',
      currentPodHash: 'bbb',
      pauseConditions: [{ reason: 'BlueGreenPause', startTime: '2026-01-01T00:00:00Z' }],
    };
    state.services = [
      { name: 'web', resourceVersion: '1', selector: { app: 'web', 'rollouts-pod-template-hash': 'aaa' } },
      {
        name: 'web-preview',
        resourceVersion: '1',
        selector: { app: 'web', 'rollouts-pod-template-hash': 'bbb' },
      },
    ];
    const view = buildRolloutView(state);
    expect(view.blueGreen).toEqual({
      activeService: 'web',
      activeHash: 'aaa',
      previewService: 'web-preview',
      previewHash: 'bbb',
    });
    expect(view.replicaSets.map((rs) => rs.role)).toContain('preview');
    const text = formatRolloutView(view);
    expect(text).toContain('Active:     web → aaa');
    expect(text).toContain('Preview:    web-preview → bbb');
    expect(text).toContain('BlueGreenPause since 2026-01-01T00:00:00Z');
    expect(text).not.toContain('Weights:');
  });
});

describe('pauseRemainingSeconds', () => {
  const started = [{ reason: 'CanaryPauseStep', startTime: '2026-01-01T00:00:00Z' }];
  const at = (seconds: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
  it.each([
    ['a 30s pause, 10s in', { pause: { duration: '30s' } }, started, at(10), 20],
    [
      'a pause given in seconds, 0.5s in, rounds up',
      { pause: { duration: 5 } },
      started,
      new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 500)),
      5,
    ],
    ['a pause already due', { pause: { duration: '1m' } }, started, at(59 + 30), 0],
    [
      'a start stamped by a clock ahead of this one: never more left than the whole pause',
      { pause: { duration: '1h' } },
      started,
      new Date(Date.UTC(2025, 11, 31, 23, 59, 58, 700)),
      3600,
    ],
    ['an indefinite pause', { pause: {} }, started, at(10), undefined],
    ['a timed pause not started yet', { pause: { duration: '30s' } }, [], at(10), undefined],
    [
      'a pause condition of another kind',
      { pause: { duration: '30s' } },
      [{ reason: 'PausedByUser', startTime: '2026-01-01T00:00:00Z' }],
      at(10),
      undefined,
    ],
    ['not a pause', { setWeight: 20 }, started, at(10), undefined],
  ])('%s', (_name, step, conditions, now, want) => {
    expect(pauseRemainingSeconds(step, conditions, now)).toBe(want);
  });
});
