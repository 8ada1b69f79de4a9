// The demo's progress line and image edit, on hand-made rollout views.
import { describe, expect, it } from 'vitest';
import { replaceImage } from '../../../src/demo/demo-repository.ts';
import { describeSnapshot, imageTag, type RolloutSnapshot } from '../../../src/demo/rollout-snapshot.ts';
import type { RolloutView } from '../../../src/views/rollout-view.ts';

function view(overrides: Partial<RolloutView>): RolloutView {
  return {
    namespace: 'default',
    name: 'demo',
    phase: 'Paused',
    paused: true,
    aborted: false,
    currentStepIndex: 1,
    steps: [
      { index: 0, description: 'setWeight: 20', state: 'done' },
      { index: 1, description: 'pause: 3s', state: 'current' },
    ],
    weights: { canary: 20, stable: 80 },
    stableRS: 'aaa',
    currentPodHash: 'bbb',
    replicas: { desired: 5, updated: 1, ready: 5, available: 5 },
    pauseConditions: [],
    replicaSets: [
      {
        name: 'demo-bbb',
        podTemplateHash: 'bbb',
        role: 'canary',
        desired: 1,
        current: 1,
        ready: 1,
        available: 1,
      },
      {
        name: 'demo-aaa',
        podTemplateHash: 'aaa',
        role: 'stable',
        desired: 4,
        current: 4,
        ready: 3,
        available: 3,
      },
    ],
    failingPods: [],
    analysisRuns: [],
    conditions: [],
    ...overrides,
  };
}

const images = new Map([
  ['aaa', 'ghcr.io/rollgate/demo-app:1.0.0'],
  ['bbb', 'ghcr.io/rollgate/demo-app:1.1.0'],
]);

describe('describeSnapshot', () => {
  it('shows step, weights, both revisions with their tags and readiness, and the phase', () => {
    const snapshot: RolloutSnapshot = { view: view({ message: 'CanaryPauseStep' }), images };
    expect(describeSnapshot(snapshot)).toBe(
      'step 2/2 pause: 3s · canary 20% / stable 80% · canary 1.1.0 ready 1/1 · stable 1.0.0 ready 3/4 · Paused (paused): CanaryPauseStep',
    );
  });

  it('marks an aborted rollout and says when every step is done', () => {
    const snapshot: RolloutSnapshot = {
      view: view({
        phase: 'Degraded',
        aborted: true,
        currentStepIndex: 2,
        weights: { canary: 0, stable: 100 },
      }),
      images,
    };
    expect(describeSnapshot(snapshot)).toContain('steps done 2/2 · canary 0% / stable 100%');
    expect(describeSnapshot(snapshot)).toContain('Degraded (aborted)');
  });
});

describe('imageTag', () => {
  it('keeps the tag, never a registry port', () => {
    expect(imageTag('ghcr.io/rollgate/demo-app:1.2.0')).toBe('1.2.0');
    expect(imageTag('registry.local:5000/app')).toBe('registry.local:5000/app');
    expect(imageTag(`app@sha256:${'ab'.repeat(32)}`)).toBe(`sha256:${'ab'.repeat(6)}`);
    expect(imageTag(undefined)).toBe('-');
  });
});

describe('replaceImage', () => {
  it('changes only the first image line and keeps its indentation', () => {
    const manifest =
      'spec:\n      containers:\n        - name: app\n          image: app:1\n        - image: side:1\n';
    expect(replaceImage(manifest, 'app:2')).toBe(
      'spec:\n      containers:\n        - name: app\n          image: app:2\n        - image: side:1\n',
    );
    expect(() => replaceImage('kind: ConfigMap\n', 'app:2')).toThrow(/no "image:" line/);
  });
});
