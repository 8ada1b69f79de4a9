// spec.workloadRef in the pure planner: waiting for an unusable Deployment, and scaleDown never / onsuccess / progressively.
import { describe, expect, it } from 'vitest';
import { planRollout, type ObservedWorkload, type RolloutAction } from '../../../src/rollout/index.ts';
import { WORKLOAD_REF_NOT_FOUND, workloadReplicaTarget } from '../../../src/rollout/plan-workload.ts';
import type { WorkloadScaleDown } from '../../../src/manifest/rollout.ts';
import { anObservedState } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const DEPLOYMENT: Extract<ObservedWorkload, { state: 'resolved' }> = {
  state: 'resolved',
  kind: 'Deployment',
  name: 'web',
  resourceVersion: '42',
  generation: 3,
  replicas: 4,
};

function referencing(scaleDown: WorkloadScaleDown | undefined) {
  const builder = aRollout().withSteps({ setWeight: 25 }, { pause: {} });
  const rollout = builder.build();
  rollout.spec.workloadRef = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: 'web',
    ...(scaleDown !== undefined ? { scaleDown } : {}),
  };
  return rollout;
}

const scales = (actions: RolloutAction[]) => actions.filter((a) => a.kind === 'scaleDeployment');

describe('workloadReplicaTarget', () => {
  const rows: Array<{
    name: string;
    scaleDown: WorkloadScaleDown | undefined;
    available: number;
    healthy: boolean;
    deploymentReplicas?: number;
    want: number | undefined;
  }> = [
    {
      name: 'never (the default) leaves it alone',
      scaleDown: undefined,
      available: 4,
      healthy: true,
      want: undefined,
    },
    {
      name: 'never leaves it alone when Healthy',
      scaleDown: 'never',
      available: 4,
      healthy: true,
      want: undefined,
    },
    {
      name: 'onsuccess waits for Healthy',
      scaleDown: 'onsuccess',
      available: 4,
      healthy: false,
      want: undefined,
    },
    { name: 'onsuccess: 0 once Healthy', scaleDown: 'onsuccess', available: 4, healthy: true, want: 0 },
    {
      name: 'onsuccess waits until the stable has every desired pod available',
      scaleDown: 'onsuccess',
      available: 3,
      healthy: true,
      want: undefined,
    },
    {
      name: 'progressively: nothing available, nothing taken',
      scaleDown: 'progressively',
      available: 0,
      healthy: false,
      want: undefined,
    },
    {
      name: 'progressively: one pod available, one taken',
      scaleDown: 'progressively',
      available: 1,
      healthy: false,
      want: 3,
    },
    {
      name: 'progressively: all available, 0',
      scaleDown: 'progressively',
      available: 4,
      healthy: false,
      want: 0,
    },
    {
      name: 'progressively never scales up again (pods lost after the hand-over)',
      scaleDown: 'progressively',
      available: 1,
      healthy: false,
      deploymentReplicas: 0,
      want: undefined,
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const rollout = referencing(row.scaleDown);
      const hash = hashOf('app:1');
      const status = row.healthy
        ? { phase: 'Healthy' as const, stableRS: hash, currentPodHash: hash }
        : { phase: 'Progressing' as const, currentPodHash: hash };
      rollout.status = status;
      const observed = anObservedState(rollout)
        .withReplicaSet('app:1', { replicas: 4, available: row.available })
        .build();
      expect(
        workloadReplicaTarget({
          rollout,
          workload: { ...DEPLOYMENT, replicas: row.deploymentReplicas ?? DEPLOYMENT.replicas },
          replicaSets: observed.replicaSets,
          planned: status,
        }),
      ).toBe(row.want);
    });
});

describe('planRollout with spec.workloadRef', () => {
  it('an unusable Deployment: InvalidSpec naming why, a Warning Event, nothing else, no requeue', () => {
    const rollout = referencing('onsuccess');
    const reason =
      'workloadRef not found: Deployment "web" does not exist in namespace "default"; the rollout waits for it';
    const observed = {
      ...anObservedState(rollout).build(),
      workload: { state: 'unresolved' as const, name: 'web', cause: 'notFound' as const, reason },
    };
    const plan = planRollout(rollout, observed, NOW);
    expect(plan.actions).toEqual([
      { kind: 'emitEvent', type: 'Warning', reason: WORKLOAD_REF_NOT_FOUND, message: reason },
    ]);
    expect(plan.requeueAfterMs).toBeUndefined();
    expect(plan.status.phase).toBe('Degraded');
    expect(plan.status.message).toBe(`InvalidSpec: ${reason}`);
    expect(plan.status.conditions).toContainEqual(
      expect.objectContaining({
        type: 'InvalidSpec',
        status: 'True',
        reason: WORKLOAD_REF_NOT_FOUND,
        message: reason,
      }),
    );
  });

  it('first deploy, progressively: the Deployment gives up a pod for each available one, after the ReplicaSet writes', () => {
    const rollout = referencing('progressively');
    const hash = hashOf('app:1');
    rollout.status = { currentPodHash: hash, stableRS: hash, phase: 'Progressing' };
    const observed = {
      ...anObservedState(rollout).withReplicaSet('app:1', { replicas: 4, available: 3 }).build(),
      workload: DEPLOYMENT,
    };
    const plan = planRollout(rollout, observed, NOW);
    expect(scales(plan.actions)).toEqual([
      { kind: 'scaleDeployment', name: 'web', resourceVersion: '42', replicas: 1 },
    ]);
    const kinds = plan.actions.map((a) => a.kind);
    expect(kinds.indexOf('scaleDeployment')).toBeLessThan(kinds.indexOf('emitEvent'));
    expect(plan.status.workloadObservedGeneration).toBe('3');
  });

  it('onsuccess: scaled to 0 on the pass after Healthy was recorded, and a Deployment at 0 is not written again', () => {
    const hash = hashOf('app:1');
    const rollout = referencing('onsuccess');
    rollout.status = { currentPodHash: hash, stableRS: hash, phase: 'Healthy', currentStepIndex: 2 };
    const observed = {
      ...anObservedState(rollout).withReplicaSet('app:1', { replicas: 4 }).build(),
      workload: DEPLOYMENT,
    };
    const plan = planRollout(rollout, observed, NOW);
    expect(plan.status.phase).toBe('Healthy');
    expect(scales(plan.actions)).toEqual([
      { kind: 'scaleDeployment', name: 'web', resourceVersion: '42', replicas: 0 },
    ]);
    const again = planRollout(rollout, { ...observed, workload: { ...DEPLOYMENT, replicas: 0 } }, NOW);
    expect(scales(again.actions)).toEqual([]);
  });

  it('onsuccess, later revision: replicas put back on the Deployment (a sync from Git) go at once, mid-canary', () => {
    const rollout = referencing('onsuccess');
    rollout.spec.template.spec.containers[0]!.image = 'app:2';
    rollout.status = {
      currentPodHash: hashOf('app:2'),
      stableRS: hashOf('app:1'),
      phase: 'Paused',
      currentStepIndex: 1,
    };
    const observed = {
      ...anObservedState(rollout)
        .withReplicaSet('app:1', { replicas: 4 })
        .withReplicaSet('app:2', { replicas: 1 })
        .build(),
      workload: { ...DEPLOYMENT, replicas: 4 },
    };
    const plan = planRollout(rollout, observed, NOW);
    expect(scales(plan.actions)).toEqual([
      { kind: 'scaleDeployment', name: 'web', resourceVersion: '42', replicas: 0 },
    ]);
  });

  it('never: the Deployment is untouched, its generation still reported', () => {
    const hash = hashOf('app:1');
    const rollout = referencing(undefined);
    rollout.status = { currentPodHash: hash, stableRS: hash, phase: 'Healthy', currentStepIndex: 2 };
    const observed = {
      ...anObservedState(rollout).withReplicaSet('app:1', { replicas: 4 }).build(),
      workload: DEPLOYMENT,
    };
    const plan = planRollout(rollout, observed, NOW);
    expect(scales(plan.actions)).toEqual([]);
    expect(plan.status.workloadObservedGeneration).toBe('3');
  });

  it('a ReplicaSet or PodTemplate is read from, never scaled, whatever scaleDown says; its generation is reported', () => {
    const hash = hashOf('app:1');
    for (const kind of ['ReplicaSet', 'PodTemplate']) {
      const rollout = referencing('onsuccess');
      rollout.status = { currentPodHash: hash, stableRS: hash, phase: 'Healthy', currentStepIndex: 2 };
      const observed = {
        ...anObservedState(rollout).withReplicaSet('app:1', { replicas: 4 }).build(),
        workload: { ...DEPLOYMENT, kind },
      };
      const plan = planRollout(rollout, observed, NOW);
      expect(scales(plan.actions), kind).toEqual([]);
      expect(plan.status.workloadObservedGeneration).toBe('3');
      // The same pass with a Deployment scales it: only the kind made the difference.
      const deployment = planRollout(rollout, { ...observed, workload: DEPLOYMENT }, NOW);
      expect(scales(deployment.actions)).toHaveLength(1);
    }
  });
});
