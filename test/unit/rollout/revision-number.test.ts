// The revision number Argo's tools read (rollout.argoproj.io/revision): counted up per new revision, renumbered on rollback.
import { describe, expect, it } from 'vitest';
import {
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  planRollout,
  type RolloutAction,
  type RolloutPlan,
} from '../../../src/rollout/index.ts';
import { anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';
import type { Rollout } from '../../../src/manifest/rollout.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const numbered = (revision: number, more: Record<string, string> = {}) => ({
  [REVISION_ANNOTATION]: String(revision),
  ...more,
});
type Sets = Record<string, ReplicaSetOptions>;

function plan(rollout: Rollout, sets: Sets, options: { unnumbered?: boolean } = {}): RolloutPlan {
  const observed = anObservedState(rollout);
  for (const [image, set] of Object.entries(sets)) observed.withReplicaSet(image, set);
  if (options.unnumbered === true) observed.unnumbered();
  return planRollout(rollout, observed.build(), NOW);
}
const writesTo = (result: RolloutPlan, image: string) =>
  result.actions.filter(
    (a): a is Extract<RolloutAction, { kind: 'scaleReplicaSet' | 'createReplicaSet' }> =>
      (a.kind === 'scaleReplicaSet' || a.kind === 'createReplicaSet') && a.name === `web-${hashOf(image)}`,
  );

describe('revision numbers, as Argo Rollouts counts them', () => {
  it('the first ReplicaSet is revision 1, and the Rollout says so', () => {
    const result = plan(aRollout().withReplicas(3).build(), {});
    expect(writesTo(result, 'app:1')).toEqual([
      expect.objectContaining({ kind: 'createReplicaSet', annotations: numbered(1) }),
    ]);
    expect(result.annotations).toEqual(numbered(1));
  });

  it('a new template is one more than the highest number any ReplicaSet carries', () => {
    const rollout = aRollout().withReplicas(4).withImage('app:3').withSteps({ setWeight: 25 }).build();
    rollout.status = { stableRS: hashOf('app:2'), currentPodHash: hashOf('app:2'), currentStepIndex: 1 };
    const result = plan(rollout, {
      'app:1': { replicas: 0, annotations: numbered(4), createdAt: '2026-01-01T00:00:00Z' },
      'app:2': { replicas: 4, annotations: numbered(7), createdAt: '2026-01-01T01:00:00Z' },
    });
    expect(writesTo(result, 'app:3')).toEqual([
      expect.objectContaining({ kind: 'createReplicaSet', annotations: numbered(8) }),
    ]);
    expect(result.annotations).toEqual(numbered(8));
  });

  it('a rollback to an older ReplicaSet renumbers it as the newest and keeps what it was in the history', () => {
    const rollout = aRollout().withReplicas(4).withImage('app:1').withSteps({ setWeight: 25 }).build();
    rollout.status = { stableRS: hashOf('app:2'), currentPodHash: hashOf('app:2'), currentStepIndex: 1 };
    const result = plan(rollout, {
      'app:1': { replicas: 0, annotations: numbered(3, { [REVISION_HISTORY_ANNOTATION]: '1' }) },
      'app:2': { replicas: 4, annotations: numbered(4) },
    });
    const renumbered = writesTo(result, 'app:1');
    // One write to the ReplicaSet in the pass: the renumbering rides on the scale the canary makes anyway.
    expect(renumbered).toHaveLength(1);
    expect(renumbered[0]).toMatchObject({
      kind: 'scaleReplicaSet',
      annotations: numbered(5, { [REVISION_HISTORY_ANNOTATION]: '1,3' }),
    });
    expect(result.annotations).toEqual(numbered(5));
  });

  it('a ReplicaSet without a number (an older Rollgate left it) gets the next one in a write of its own', () => {
    const rollout = aRollout().withReplicas(3).build();
    rollout.status = { stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1'), currentStepIndex: 0 };
    const result = plan(rollout, { 'app:1': { replicas: 3 } }, { unnumbered: true });
    expect(writesTo(result, 'app:1')).toEqual([
      {
        kind: 'scaleReplicaSet',
        name: `web-${hashOf('app:1')}`,
        resourceVersion: '10',
        replicas: 3,
        annotations: numbered(1),
      },
    ]);
    expect(result.annotations).toEqual(numbered(1));
  });

  it('a revision already numbered, on the Rollout too, writes nothing for it', () => {
    const rollout = aRollout().withReplicas(3).build();
    rollout.status = { stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1'), currentStepIndex: 0 };
    rollout.metadata.annotations = numbered(6);
    const result = plan(rollout, { 'app:1': { replicas: 3, annotations: numbered(6) } });
    expect(writesTo(result, 'app:1')).toEqual([]);
    expect(result.annotations).toBeUndefined();
  });

  it('an annotation that is not a number counts as none, as Argo skips it', () => {
    const rollout = aRollout().withReplicas(2).withImage('app:2').withSteps({ setWeight: 50 }).build();
    rollout.status = { stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1'), currentStepIndex: 1 };
    const result = plan(rollout, { 'app:1': { replicas: 2, annotations: { [REVISION_ANNOTATION]: 'two' } } });
    expect(writesTo(result, 'app:2')[0]).toMatchObject({ annotations: numbered(1) });
  });

  it("an abort names the revision's number, as Argo's message does", () => {
    const rollout = aRollout().withReplicas(4).withImage('app:2').withSteps({ setWeight: 25 }).build();
    rollout.status = {
      stableRS: hashOf('app:1'),
      currentPodHash: hashOf('app:2'),
      currentStepIndex: 1,
      abort: true,
    };
    const result = plan(rollout, {
      'app:1': { replicas: 3, annotations: numbered(11) },
      'app:2': { replicas: 1, annotations: numbered(12) },
    });
    expect(result.status.message).toBe('RolloutAborted: Rollout aborted update to revision 12');
  });
});
