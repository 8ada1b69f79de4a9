// The simulated ReplicaSet controller creates, deletes and counts pods as the real one does.

import { describe, expect, it } from 'vitest';
import { kubeletStatus, planReplicaSet } from '../../../src/sandbox/controllers/index.ts';
import type { ControllerOptions, KubeObject } from '../../../src/sandbox/controllers/index.ts';
import { MiniCluster } from './mini-cluster.ts';
import { at, t0 } from './pod-fixtures.ts';

const options: ControllerOptions = { missingImages: [], readyDelayMs: 1000 };

function aReplicaSet(
  replicas: number,
  extra: Record<string, unknown> = {},
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web-7d9f', namespace: 'shop', uid: 'rs-uid', generation: 3 },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: {
          labels: { app: 'web', 'pod-template-hash': '7d9f' },
          ...(annotations ? { annotations } : {}),
        },
        spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
      },
      ...extra,
    },
  };
}

/** A pod owned by the RS, created at `createdMs`, with its kubelet status at `nowMs`. */
function ownedPod(name: string, createdMs: number, nowMs: number, behavior?: string): KubeObject {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      creationTimestamp: new Date(t0 + createdMs).toISOString(),
      labels: { app: 'web', 'pod-template-hash': '7d9f' },
      ...(behavior ? { annotations: { 'sandbox.rollgate.dev/behavior': behavior } } : {}),
    },
    spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
  };
  pod.status = kubeletStatus(pod, at(nowMs), options).status;
  return pod;
}

describe('planReplicaSet', () => {
  it('creates the missing pods from the template with generateName and a controller owner reference', () => {
    const plan = planReplicaSet(
      aReplicaSet(3, {}, { 'sandbox.rollgate.dev/behavior': 'slow-start' }),
      [],
      at(0),
      options,
    );
    expect(plan.create).toHaveLength(3);
    expect(plan.delete).toEqual([]);
    expect(plan.create[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'web-7d9f-',
        namespace: 'shop',
        labels: { app: 'web', 'pod-template-hash': '7d9f' },
        annotations: { 'sandbox.rollgate.dev/behavior': 'slow-start' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-7d9f',
            uid: 'rs-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
    });
    expect(plan.status).toEqual({ replicas: 0, observedGeneration: 3 });
  });

  it('deletes surplus pods, not-ready first, then the newest', () => {
    const pods = [
      ownedPod('old-ready', 0, 60_000),
      ownedPod('new-ready', 20_000, 60_000),
      ownedPod('stuck', 0, 60_000, 'never-ready'),
      ownedPod('mid-ready', 10_000, 60_000),
    ];
    expect(planReplicaSet(aReplicaSet(2), pods, at(60_000), options).delete).toEqual(['stuck', 'new-ready']);
    expect(planReplicaSet(aReplicaSet(0), pods, at(60_000), options).delete).toHaveLength(4);
  });

  it('does not count pods being deleted or finished, and replaces them', () => {
    const deleting = ownedPod('going', 0, 5000);
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:04Z';
    const failed = ownedPod('failed', 0, 5000);
    failed.status = { ...failed.status, phase: 'Failed' };
    const plan = planReplicaSet(
      aReplicaSet(2),
      [deleting, failed, ownedPod('ok', 0, 5000)],
      at(5000),
      options,
    );
    expect(plan.create).toHaveLength(1);
    expect(plan.status.replicas).toBe(1);
  });

  it('counts ready and available pods, respecting minReadySeconds from the Ready transition', () => {
    // ready at 1s after creation; minReadySeconds 10 → available at 11s
    const pods = [ownedPod('a', 0, 5000), ownedPod('b', 0, 5000), ownedPod('c', 4500, 5000)];
    const rs = aReplicaSet(3, { minReadySeconds: 10 });
    const early = planReplicaSet(rs, pods, at(5000), options);
    expect(early.status).toMatchObject({
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      observedGeneration: 3,
    });
    expect(early.status.availableReplicas).toBeUndefined();
    expect(early.nextChangeAt).toEqual(at(11_000));

    const later = [ownedPod('a', 0, 11_000), ownedPod('b', 0, 11_000), ownedPod('c', 4500, 11_000)];
    const plan = planReplicaSet(rs, later, at(11_000), options);
    expect(plan.status).toMatchObject({ readyReplicas: 3, availableReplicas: 2 });
    // c became Ready at 5.5s, recorded with second precision (00:00:05Z) as metav1.Time is
    expect(plan.nextChangeAt).toEqual(at(15_000));
  });

  it('counts only pods carrying every template label as fully labeled', () => {
    const relabeled = ownedPod('x', 0, 2000);
    relabeled.metadata.labels = { app: 'web' };
    const plan = planReplicaSet(aReplicaSet(2), [relabeled, ownedPod('y', 0, 2000)], at(2000), options);
    expect(plan.status.fullyLabeledReplicas).toBe(1);
  });

  it('reports ReplicaFailure when the template cannot make a valid pod, and clears it once fixed', () => {
    const broken = aReplicaSet(1);
    (broken.spec?.template as { spec: { containers: unknown[] } }).spec.containers = [{ name: 'app' }];
    const failed = planReplicaSet(broken, [], at(0), options);
    expect(failed.create).toEqual([]);
    expect(failed.status.conditions).toEqual([
      {
        type: 'ReplicaFailure',
        status: 'True',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'FailedCreate',
        message: 'Pod "web-7d9f-" is invalid: spec.containers[0].image: Required value',
      },
    ]);
    const fixed = planReplicaSet({ ...aReplicaSet(1), status: failed.status }, [], at(1000), options);
    expect(fixed.status.conditions).toBeUndefined();
    expect(fixed.create).toHaveLength(1);
  });

  it('creates nothing for a ReplicaSet being deleted', () => {
    const rs = aReplicaSet(2);
    rs.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    expect(planReplicaSet(rs, [], at(0), options).create).toEqual([]);
  });

  it('with the kubelet: pods become ready and available, scaling down removes the newest', () => {
    const cluster = new MiniCluster(aReplicaSet(3, { minReadySeconds: 2 }), planReplicaSet, options);
    cluster.run(t0, 0, 2500, 500);
    expect(cluster.owner.status).toMatchObject({ replicas: 3, readyReplicas: 3 });
    expect(cluster.owner.status?.availableReplicas).toBeUndefined();
    cluster.run(t0, 3000, 3500, 500);
    expect(cluster.owner.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3 });

    cluster.owner = { ...cluster.owner, spec: { ...cluster.owner.spec, replicas: 1 } };
    cluster.run(t0, 4000, 4500, 500);
    expect(cluster.pods.map((pod) => pod.metadata.name)).toEqual(['web-7d9f-00001']);
    expect(cluster.owner.status).toMatchObject({ replicas: 1, availableReplicas: 1 });
  });

  it('with the kubelet: a crash-looping template never stays available', () => {
    const template = aReplicaSet(2, {}, { 'sandbox.rollgate.dev/behavior': 'crash-loop' });
    const cluster = new MiniCluster(template, planReplicaSet, options);
    cluster.run(t0, 0, 60_000, 500);
    expect(cluster.owner.status?.replicas).toBe(2);
    expect(cluster.owner.status?.readyReplicas).toBeUndefined();
    expect(cluster.pods).toHaveLength(2);
  });
});
