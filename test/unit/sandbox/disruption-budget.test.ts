// The disruption controller's arithmetic: expected pods, desired healthy, disruptions allowed, disrupted pods.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/sandbox/controllers/index.ts';
import {
  DISRUPTED_POD_TIMEOUT_MS,
  evictionBudgetSelects,
  planDisruptionBudget,
  scaledIntOrPercent,
} from '../../../src/sandbox/controllers/index.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));

function pod(
  name: string,
  opts: { ready?: boolean; owner?: string; terminating?: boolean; labels?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      labels: opts.labels ?? { app: 'web' },
      ...(opts.owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: opts.owner,
                uid: opts.owner,
                controller: true,
              },
            ],
          }
        : {}),
      ...(opts.terminating ? { deletionTimestamp: '2026-01-01T12:00:30Z' } : {}),
    },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

function replicaSet(uid: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: uid, namespace: 'ns', uid },
    spec: { replicas },
  };
}

function budget(spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'ns', generation: 3 },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    ...(status ? { status } : {}),
  };
}

const three = [pod('a', { owner: 'rs' }), pod('b', { owner: 'rs' }), pod('c', { owner: 'rs' })];

describe('planDisruptionBudget', () => {
  const rows: Array<{
    name: string;
    spec: Record<string, unknown>;
    pods: KubeObject[];
    replicaSets?: KubeObject[];
    want: {
      expectedPods: number;
      desiredHealthy: number;
      currentHealthy: number;
      disruptionsAllowed: number;
    };
  }> = [
    {
      name: 'minAvailable int: expected is the number of matching pods',
      spec: { minAvailable: 2 },
      pods: three,
      replicaSets: [replicaSet('rs', 5)],
      want: { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 },
    },
    {
      name: 'minAvailable percentage rounds up over the ReplicaSet scale',
      spec: { minAvailable: '50%' },
      pods: three,
      replicaSets: [replicaSet('rs', 3)],
      want: { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 },
    },
    {
      name: 'maxUnavailable percentage rounds up the pods that may be unavailable',
      spec: { maxUnavailable: '30%' },
      pods: [...three, pod('d', { owner: 'rs' })],
      replicaSets: [replicaSet('rs', 4)],
      want: { expectedPods: 4, desiredHealthy: 2, currentHealthy: 4, disruptionsAllowed: 2 },
    },
    {
      name: 'maxUnavailable counts the scale, not the pods that exist yet',
      spec: { maxUnavailable: 1 },
      pods: three,
      replicaSets: [replicaSet('rs', 5)],
      want: { expectedPods: 5, desiredHealthy: 4, currentHealthy: 3, disruptionsAllowed: 0 },
    },
    {
      name: 'each ReplicaSet counted once, unowned pods one each',
      spec: { maxUnavailable: 0 },
      pods: [pod('a', { owner: 'x' }), pod('b', { owner: 'x' }), pod('c', { owner: 'y' }), pod('d')],
      replicaSets: [replicaSet('x', 2), replicaSet('y', 3)],
      want: { expectedPods: 6, desiredHealthy: 6, currentHealthy: 4, disruptionsAllowed: 0 },
    },
    {
      name: 'terminating and unready pods are not healthy',
      spec: { minAvailable: 1 },
      pods: [pod('a'), pod('b', { ready: false }), pod('c', { terminating: true })],
      want: { expectedPods: 3, desiredHealthy: 1, currentHealthy: 1, disruptionsAllowed: 0 },
    },
    {
      name: 'pods of other labels are not counted',
      spec: { minAvailable: 1 },
      pods: [pod('a'), pod('b'), pod('other', { labels: { app: 'db' } })],
      want: { expectedPods: 2, desiredHealthy: 1, currentHealthy: 2, disruptionsAllowed: 1 },
    },
    {
      name: 'no matching pods: nothing may be disrupted',
      spec: { maxUnavailable: '100%' },
      pods: [],
      want: { expectedPods: 0, desiredHealthy: 0, currentHealthy: 0, disruptionsAllowed: 0 },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const plan = planDisruptionBudget(budget(row.spec), row.pods, row.replicaSets ?? [], NOW);
      expect(plan.status).toMatchObject({ ...row.want, observedGeneration: 3 });
      expect(plan).toMatchObject(row.want);
    });
  }

  it('keeps the DisruptionAllowed condition in step, moving lastTransitionTime only on a flip', () => {
    const first = planDisruptionBudget(budget({ minAvailable: 2 }), three, [], NOW);
    expect(first.status.conditions).toEqual([
      {
        type: 'DisruptionAllowed',
        status: 'True',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T12:00:00Z',
        reason: 'SufficientPods',
        message: '',
      },
    ]);
    const later = new Date(NOW.getTime() + 60_000);
    const same = planDisruptionBudget(budget({ minAvailable: 2 }, first.status), three, [], later);
    expect(same.status).toEqual(first.status);
    const flipped = planDisruptionBudget(budget({ minAvailable: 3 }, first.status), three, [], later);
    expect(flipped.status.conditions).toEqual([
      expect.objectContaining({
        status: 'False',
        reason: 'InsufficientPods',
        lastTransitionTime: '2026-01-01T12:01:00Z',
      }),
    ]);
  });

  it('keeps an evicted pod out of currentHealthy until it terminates or its entry expires', () => {
    const evictedAt = '2026-01-01T12:00:00Z';
    const pdb = budget({ minAvailable: 1 }, { disruptedPods: { a: evictedAt, gone: evictedAt } });
    const plan = planDisruptionBudget(pdb, three, [], NOW);
    expect(plan.status.disruptedPods).toEqual({ a: evictedAt });
    expect(plan.currentHealthy).toBe(2);
    expect(plan.nextChangeAt).toEqual(new Date(NOW.getTime() + DISRUPTED_POD_TIMEOUT_MS));
    const expired = planDisruptionBudget(pdb, three, [], new Date(NOW.getTime() + DISRUPTED_POD_TIMEOUT_MS));
    expect(expired.status.disruptedPods).toBeUndefined();
    expect(expired.currentHealthy).toBe(3);
  });

  it('fails safe (nothing allowed, SyncFailed) on a value it cannot scale', () => {
    const plan = planDisruptionBudget(budget({ maxUnavailable: 'half' }), three, [], NOW);
    expect(plan.disruptionsAllowed).toBe(0);
    expect(plan.status.conditions).toEqual([
      expect.objectContaining({ status: 'False', reason: 'SyncFailed' }),
    ]);
  });
});

describe('scaledIntOrPercent and selectors', () => {
  it('rounds percentages as intstr.GetScaledValueFromIntOrPercent', () => {
    expect(scaledIntOrPercent('50%', 3, true, 'f')).toBe(2);
    expect(scaledIntOrPercent('50%', 3, false, 'f')).toBe(1);
    expect(scaledIntOrPercent(4, 3, true, 'f')).toBe(4);
    expect(() => scaledIntOrPercent('1.5%', 3, true, 'f')).toThrow(/not a percentage/);
  });

  it('leaves a budget with an empty selector out of evictions, as kube-apiserver does', () => {
    const empty = { ...budget({}), spec: { selector: {}, minAvailable: 1 } };
    expect(evictionBudgetSelects(empty, pod('a'))).toBe(false);
    expect(planDisruptionBudget(empty, three, [], NOW).currentHealthy).toBe(3);
    expect(evictionBudgetSelects(budget({}), pod('a'))).toBe(true);
    expect(evictionBudgetSelects({ ...budget({}), spec: {} }, pod('a'))).toBe(false);
  });
});
