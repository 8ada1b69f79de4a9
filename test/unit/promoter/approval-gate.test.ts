// Which Rollouts `rollgate approve` can approve: only one waiting at an indefinite pause, and why not otherwise.
import { describe, expect, it } from 'vitest';
import {
  approvalBranch,
  approvalGateOf,
  approvalTitle,
  formatApprovalOutcome,
} from '../../../src/promoter/approval-commit.ts';

const steps = [{ setWeight: 20 }, { pause: {} }, { pause: { duration: '30s' } }, { analysis: {} }];

function rollout(status: Record<string, unknown>, canarySteps: unknown[] = steps): Record<string, unknown> {
  return {
    metadata: { name: 'web', namespace: 'prod' },
    spec: { strategy: { canary: { steps: canarySteps } } },
    status,
  };
}

describe('approvalGateOf', () => {
  it('gives the revision and step of an indefinite pause', () => {
    expect(approvalGateOf(rollout({ currentPodHash: 'k2x9b4d', currentStepIndex: 1 }))).toEqual({
      hash: 'k2x9b4d',
      step: 1,
    });
  });

  it.each([
    {
      name: 'a weight step',
      status: { currentPodHash: 'h', currentStepIndex: 0 },
      want: /at step 0 of 4, setWeight 20/,
    },
    {
      name: 'a timed pause',
      status: { currentPodHash: 'h', currentStepIndex: 2 },
      want: /pause 30s, which ends by itself/,
    },
    {
      name: 'an analysis',
      status: { currentPodHash: 'h', currentStepIndex: 3 },
      want: /at step 3 of 4, analysis/,
    },
    {
      name: 'finished',
      status: { currentPodHash: 'h', currentStepIndex: 4, phase: 'Healthy' },
      want: /has finished its steps \(phase Healthy\)/,
    },
    {
      name: 'aborted',
      status: { currentPodHash: 'h', currentStepIndex: 1, abort: true },
      want: /is aborted/,
    },
    { name: 'no status yet', status: {}, want: /has not started a revision yet/ },
  ])('refuses $name, saying what the rollout is doing', ({ status, want }) => {
    let thrown: unknown;
    try {
      approvalGateOf(rollout(status));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'approval.not_at_gate' });
    expect((thrown as Error).message).toMatch(/^rollout prod\/web /);
    expect((thrown as Error).message).toMatch(want);
  });

  it('refuses a rollout without canary steps', () => {
    expect(() => approvalGateOf(rollout({ currentPodHash: 'h', currentStepIndex: 0 }, []))).toThrow(
      /has no canary steps/,
    );
  });

  it('names the pull request and its branch after the rollout, step and revision', () => {
    expect(approvalTitle('web', { hash: 'k2x9b4d', step: 1 })).toBe('Approve web step 1 (revision k2x9b4d)');
    expect(approvalBranch('web', { hash: 'k2x9b4d', step: 1 })).toBe('rollgate/approve/web/k2x9b4d-1');
  });

  it('prints the commit and branch, the pull request link, or that Git already had it', () => {
    const common = { gate: { hash: 'k2x9b4d', step: 1 }, source: 'prod', file: 'envs/prod/web.yaml' };
    expect(
      formatApprovalOutcome('web', {
        kind: 'commit',
        ...common,
        branch: 'main',
        commit: 'abc123',
        already: false,
      }),
    ).toBe(
      'approved web step 1 (revision k2x9b4d): commit abc123 pushed to main (source prod, envs/prod/web.yaml)\n',
    );
    const pullRequest = {
      number: 7,
      url: 'https://forge.example/acme/deploy/pull/7',
      title: 'Approve web step 1 (revision k2x9b4d)',
      body: '',
      state: 'open' as const,
      head: 'rollgate/approve/web/k2x9b4d-1',
      headSha: 'def456',
      base: 'main',
      labels: [],
      draft: false,
    };
    expect(
      formatApprovalOutcome('web', {
        kind: 'pull-request',
        ...common,
        branch: 'rollgate/approve/web/k2x9b4d-1',
        commit: 'def456',
        already: false,
        pullRequest,
      }),
    ).toBe(
      'pull request #7 https://forge.example/acme/deploy/pull/7 approves web step 1 (revision k2x9b4d): branch rollgate/approve/web/k2x9b4d-1 at def456\n',
    );
    expect(
      formatApprovalOutcome('web', {
        kind: 'commit',
        ...common,
        branch: 'main',
        commit: 'abc123',
        already: true,
      }),
    ).toMatch(/already has rollgate.dev\/approve: "k2x9b4d\/1" \(main at abc123\); nothing pushed/);
  });
});
