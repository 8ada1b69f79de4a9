// Commit statuses: pending while the canary runs, success when Healthy, failure with the abort message.
import { describe, expect, it } from 'vitest';
import { planCommitStatus } from '../../../src/promotion/commit-status.ts';
import type { PromotionRollout } from '../../../src/promotion/promotable-revision.ts';

const rollout = (status: PromotionRollout['status'], commit = 'c1'): PromotionRollout => ({
  namespace: 'shop',
  name: 'web',
  steps: 1,
  images: [],
  status,
  commit,
  runs: [],
});

describe('planCommitStatus', () => {
  it('reports each phase of the commit it deploys under rollgate/<source>', () => {
    expect(
      planCommitStatus(
        'staging',
        rollout({ phase: 'Paused', currentPodHash: 'h2', stableRS: 'h1', currentStepIndex: 0 }),
      ),
    ).toEqual({
      sha: 'c1',
      state: 'pending',
      context: 'rollgate/staging',
      description: 'shop/web: revision h2 is Paused',
    });
    expect(
      planCommitStatus(
        'staging',
        rollout({ phase: 'Healthy', currentPodHash: 'h2', stableRS: 'h2', currentStepIndex: 1 }),
      ),
    ).toMatchObject({
      state: 'success',
      description: 'shop/web is Healthy at revision h2',
    });
    const aborted = planCommitStatus(
      'staging',
      rollout({
        phase: 'Degraded',
        currentPodHash: 'h2',
        stableRS: 'h1',
        abort: true,
        message: `RolloutAborted: ${'x'.repeat(200)}`,
      }),
    );
    expect(aborted?.state).toBe('failure');
    expect(aborted?.description.length).toBe(140);
  });

  it('nothing for a Rollout applied by hand (no commit)', () => {
    expect(planCommitStatus('staging', rollout({ phase: 'Healthy' }, ''))).toBeUndefined();
  });

  it('a healthy revision the promotion refused (not what Git holds) is pending, never green', () => {
    const healthy = rollout({ phase: 'Healthy', currentPodHash: 'h9', stableRS: 'h9', currentStepIndex: 1 });
    expect(planCommitStatus('staging', healthy, { refused: true })).toEqual({
      sha: 'c1',
      state: 'pending',
      context: 'rollgate/staging',
      description: 'shop/web: revision h9 is not what Git holds; not promoted',
    });
  });

  it('a healthy revision whose promotion does not render is a failure: the target must be fixed first', () => {
    const healthy = rollout({ phase: 'Healthy', currentPodHash: 'h9', stableRS: 'h9', currentStepIndex: 1 });
    expect(planCommitStatus('staging', healthy, { refused: true, refusalKind: 'does-not-render' })).toEqual({
      sha: 'c1',
      state: 'failure',
      context: 'rollgate/staging',
      description: 'shop/web: revision h9 is Healthy, but its promotion does not render; not promoted',
    });
  });
});
