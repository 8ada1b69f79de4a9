// The dashboard's list row: images per role, steps and weights, Git origin, from the Rollout and its ReplicaSets.
import { describe, expect, it } from 'vitest';
import { summarizeRollout, type ReplicaSetImages } from '../../../src/server/dashboard/rollout-summary.ts';
import { rolloutSchema, type Rollout } from '../../../src/manifest/rollout.ts';

function rollout(status: Record<string, unknown>, image = 'app:2'): Rollout {
  return rolloutSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: {
      name: 'web',
      namespace: 'shop',
      labels: { 'rollgate.dev/source': 'apps' },
      annotations: { 'rollgate.dev/commit': 'abc123', 'rollgate.dev/commit-author': 'Ada <ada@example.com>' },
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } },
      strategy: { canary: { steps: [{ setWeight: 25 }, { pause: {} }, { setWeight: 50 }] } },
    },
    status,
  }) as Rollout;
}

const sets: ReplicaSetImages[] = [
  { namespace: 'shop', owner: 'web', podTemplateHash: 'old', images: ['app:1'] },
  { namespace: 'shop', owner: 'web', podTemplateHash: 'new', images: ['app:2'] },
  // Another rollout's and another namespace's ReplicaSets with the same hash never count.
  { namespace: 'shop', owner: 'api', podTemplateHash: 'new', images: ['api:9'] },
  { namespace: 'other', owner: 'web', podTemplateHash: 'old', images: ['elsewhere:1'] },
];

describe('summarizeRollout', () => {
  it('a paused canary: stable and canary images, step i/n, both weights, source and commit', () => {
    const summary = summarizeRollout(
      rollout({
        phase: 'Paused',
        stableRS: 'old',
        currentPodHash: 'new',
        currentStepIndex: 1,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-01-01T00:01:00Z' }],
        canary: {
          weights: {
            canary: { weight: 25, podTemplateHash: 'new' },
            stable: { weight: 75, podTemplateHash: 'old' },
          },
        },
      }),
      sets,
    );
    expect(summary).toMatchObject({
      namespace: 'shop',
      name: 'web',
      status: 'Paused',
      health: 'paused',
      step: '1/3',
      stepIndex: 1,
      stepCount: 3,
      setWeight: '25',
      actualWeight: 25,
      paused: true,
      aborted: false,
      images: { stable: ['app:1'], canary: ['app:2'] },
      source: 'apps',
      commit: 'abc123',
      author: 'Ada <ada@example.com>',
      createdAt: '2026-01-01T00:00:00Z',
    });
  });

  it('fully promoted: no canary image, all traffic on the current revision', () => {
    const summary = summarizeRollout(
      rollout({ phase: 'Healthy', stableRS: 'new', currentPodHash: 'new', currentStepIndex: 3 }),
      sets,
    );
    expect(summary.images).toEqual({ stable: ['app:2'], canary: [] });
    expect(summary.actualWeight).toBe(100);
    expect(summary.step).toBe('3/3');
  });

  it('before any ReplicaSet: the template is what the canary will run', () => {
    expect(summarizeRollout(rollout({}, 'app:3'), []).images).toEqual({ stable: [], canary: ['app:3'] });
  });
});
