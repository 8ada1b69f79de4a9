// A status that never landed (its writes lost to 409s) while a new template arrived: the planner records
// the stable before it creates or scales anything (F2 trial 86 of seed 42, sandbox seed 128).
import { describe, expect, it } from 'vitest';
import { SCALE_DOWN_DEADLINE_ANNOTATION, planRollout, type RolloutPlan } from '../../../src/rollout/index.ts';
import type { RolloutStatus } from '../../../src/manifest/rollout.ts';
import { anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 304));

interface Row {
  name: string;
  given: { image: string; status?: RolloutStatus; replicaSets: Record<string, ReplicaSetOptions> };
  want: {
    /** The writes of the pass (emitEvent left out), as `kind name replicas`. */
    writes: string[];
    stableRS: string;
    currentPodHash: string;
    requeueAfterMs?: number;
  };
}

const rows: Row[] = [
  {
    // Trial 86: the first pass created app:1's ReplicaSet, its status write (and four re-plans) got 409, and
    // app:2 arrived before the queue's retry. It used to go to full scale at once (steps skipped) while
    // app:1's pods were swept as an orphan's: two ReplicaSets with pods, neither named stable.
    name: 'no status at all, the first ReplicaSet has pods, a new template: records it as stable, nothing else',
    given: {
      image: 'app:2',
      replicaSets: {
        'app:1': { replicas: 4, available: 0, annotations: { 'rollout.argoproj.io/revision': '1' } },
      },
    },
    want: { writes: [], stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1'), requeueAfterMs: 0 },
  },
  {
    name: 'the recorded stable then gets a canary like any other: app:1 keeps its pods',
    given: {
      image: 'app:2',
      status: { stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1') },
      replicaSets: {
        'app:1': { replicas: 4, available: 0, annotations: { 'rollout.argoproj.io/revision': '1' } },
      },
    },
    want: {
      writes: [`createReplicaSet web-${hashOf('app:2')} 1`],
      stableRS: hashOf('app:1'),
      currentPodHash: hashOf('app:2'),
    },
  },
  {
    name: 'several unrecorded ReplicaSets with pods: the highest revision is the stable',
    given: {
      image: 'app:3',
      replicaSets: {
        'app:1': { replicas: 1, annotations: { 'rollout.argoproj.io/revision': '1' } },
        'app:2': { replicas: 4, annotations: { 'rollout.argoproj.io/revision': '2' } },
      },
    },
    want: { writes: [], stableRS: hashOf('app:2'), currentPodHash: hashOf('app:2'), requeueAfterMs: 0 },
  },
  {
    name: 'no status, only the current template’s ReplicaSet (a lost first write, no new template): first deploy',
    given: { image: 'app:1', replicaSets: { 'app:1': { replicas: 4, available: 0 } } },
    want: { writes: [], stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1') },
  },
  {
    name: 'no status, the other ReplicaSet is being scaled down (deadline set): not a stable, first deploy',
    given: {
      image: 'app:2',
      replicaSets: {
        'app:1': { replicas: 4, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '2026-01-01T00:00:10Z' } },
      },
    },
    want: {
      writes: [`createReplicaSet web-${hashOf('app:2')} 1`],
      stableRS: hashOf('app:2'),
      currentPodHash: hashOf('app:2'),
    },
  },
];

function writesOf(plan: RolloutPlan): string[] {
  return plan.actions.flatMap((a) =>
    a.kind === 'createReplicaSet' || a.kind === 'scaleReplicaSet'
      ? [`${a.kind} ${a.name} ${a.replicas}`]
      : [],
  );
}

describe('a stable the status never recorded', () => {
  for (const row of rows) {
    it(row.name, () => {
      const builder = aRollout()
        .withImage(row.given.image)
        .withSteps({ setWeight: 50 }, { pause: { duration: '1s' } });
      if (row.given.status !== undefined) builder.withStatus(row.given.status);
      const rollout = builder.build();
      const observed = anObservedState(rollout);
      for (const [image, options] of Object.entries(row.given.replicaSets))
        observed.withReplicaSet(image, options);
      const plan = planRollout(rollout, observed.build(), NOW);
      expect(writesOf(plan)).toEqual(row.want.writes);
      expect(plan.status.stableRS).toBe(row.want.stableRS);
      expect(plan.status.currentPodHash).toBe(row.want.currentPodHash);
      if (row.want.requeueAfterMs !== undefined) expect(plan.requeueAfterMs).toBe(row.want.requeueAfterMs);
    });
  }
});
