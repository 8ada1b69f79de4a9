// The simulated Job controller runs pods to success or failure, retrying until backoffLimit.

import { describe, expect, it } from 'vitest';
import { planJob } from '../../../src/sandbox/controllers/index.ts';
import type { ControllerOptions, KubeObject } from '../../../src/sandbox/controllers/index.ts';
import { MiniCluster } from './mini-cluster.ts';
import { at, conditionOf, t0 } from './pod-fixtures.ts';

const options: ControllerOptions = { missingImages: [], readyDelayMs: 1000 };

function aJob(spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'smoke', namespace: 'shop', uid: 'job-uid', generation: 1 },
    spec: {
      template: {
        metadata: { annotations },
        spec: { restartPolicy: 'Never', containers: [{ name: 'check', image: 'curl:8' }] },
      },
      ...spec,
    },
  };
}

describe('planJob', () => {
  it('starts parallelism pods labelled and owned like the real controller does', () => {
    const plan = planJob(aJob({ parallelism: 2, completions: 3 }), [], at(0), options);
    expect(plan.create).toHaveLength(2);
    expect(plan.create[0]?.metadata).toMatchObject({
      generateName: 'smoke-',
      namespace: 'shop',
      labels: {
        'batch.kubernetes.io/controller-uid': 'job-uid',
        'batch.kubernetes.io/job-name': 'smoke',
        'controller-uid': 'job-uid',
        'job-name': 'smoke',
      },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: 'smoke',
          uid: 'job-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(plan.status).toMatchObject({ startTime: '2026-01-01T00:00:00Z', ready: 0 });
  });

  it('runs to Complete with SuccessCriteriaMet, completionTime and succeeded count', () => {
    const cluster = new MiniCluster(aJob(), planJob, options);
    cluster.run(t0, 0, 2000, 500);
    expect(cluster.owner.status).toMatchObject({ active: 1, ready: 1 });
    cluster.run(t0, 2500, 3000, 500);
    const status = cluster.owner.status ?? {};
    expect(status).toMatchObject({ succeeded: 1, completionTime: '2026-01-01T00:00:02Z' });
    expect(status.active).toBeUndefined();
    expect(conditionOf(status, 'SuccessCriteriaMet')).toMatchObject({
      status: 'True',
      reason: 'CompletionsReached',
    });
    expect(conditionOf(status, 'Complete')).toMatchObject({
      status: 'True',
      reason: 'CompletionsReached',
      message: 'Reached expected number of succeeded pods',
    });
    expect(cluster.pods).toHaveLength(1);
  });

  it('runs completions pods with limited parallelism', () => {
    const cluster = new MiniCluster(aJob({ parallelism: 2, completions: 3 }), planJob, options);
    cluster.run(t0, 0, 20_000, 500);
    expect(cluster.pods).toHaveLength(3);
    expect(cluster.owner.status?.succeeded).toBe(3);
    expect(conditionOf(cluster.owner.status ?? {}, 'Complete')?.status).toBe('True');
  });

  it('retries failed pods with back-off, then fails with BackoffLimitExceeded', () => {
    const cluster = new MiniCluster(
      aJob({ backoffLimit: 2 }, { 'sandbox.rollgate.dev/job-result': 'fail' }),
      planJob,
      options,
    );
    cluster.run(t0, 0, 3000, 500);
    expect(cluster.owner.status?.failed).toBe(1);
    // the first retry waits 10s after the failure (2.5s) → no new pod until 12.5s
    expect(cluster.pods).toHaveLength(1);
    const waiting = cluster.step(at(3500));
    expect(waiting.nextChangeAt).toEqual(at(12_000));
    cluster.run(t0, 12_000, 12_000, 500);
    expect(cluster.pods).toHaveLength(2);
    cluster.run(t0, 12_500, 120_000, 500);
    const status = cluster.owner.status ?? {};
    expect(status.failed).toBe(3);
    expect(cluster.pods).toHaveLength(3);
    expect(conditionOf(status, 'FailureTarget')).toMatchObject({
      status: 'True',
      reason: 'BackoffLimitExceeded',
    });
    expect(conditionOf(status, 'Failed')).toMatchObject({
      status: 'True',
      reason: 'BackoffLimitExceeded',
      message: 'Job has reached the specified backoff limit',
    });
    expect(status.completionTime).toBeUndefined();
  });

  it('fails on the first failure with backoffLimit 0', () => {
    const cluster = new MiniCluster(
      aJob({ backoffLimit: 0 }, { 'sandbox.rollgate.dev/job-result': 'fail' }),
      planJob,
      options,
    );
    cluster.run(t0, 0, 5000, 500);
    expect(cluster.pods).toHaveLength(1);
    expect(conditionOf(cluster.owner.status ?? {}, 'Failed')?.status).toBe('True');
  });

  it('fails with DeadlineExceeded after activeDeadlineSeconds and deletes the running pod', () => {
    const job = aJob({ activeDeadlineSeconds: 5 }, { 'sandbox.rollgate.dev/job-duration': '60s' });
    const cluster = new MiniCluster(job, planJob, options);
    const early = cluster.step(at(0));
    expect(early.nextChangeAt).toEqual(at(5000));
    cluster.run(t0, 1000, 4000, 1000);
    const expire = cluster.step(at(5000));
    expect(expire.delete).toHaveLength(1);
    cluster.step(at(6000));
    expect(conditionOf(cluster.owner.status ?? {}, 'Failed')).toMatchObject({
      status: 'True',
      reason: 'DeadlineExceeded',
      message: 'Job was active longer than specified deadline',
    });
  });

  it('a suspended job runs no pods and says so', () => {
    const plan = planJob(aJob({ suspend: true }), [], at(0), options);
    expect(plan.create).toEqual([]);
    expect(conditionOf(plan.status, 'Suspended')).toMatchObject({ status: 'True', reason: 'JobSuspended' });
    expect(plan.status.startTime).toBeUndefined();
  });

  it('a finished job does nothing more', () => {
    const cluster = new MiniCluster(aJob(), planJob, options);
    cluster.run(t0, 0, 5000, 500);
    const again = cluster.step(at(60_000));
    expect(again.create).toEqual([]);
    expect(again.delete).toEqual([]);
    expect(cluster.owner.status?.completionTime).toBe('2026-01-01T00:00:02Z');
  });
});

describe('planJob: stable output', () => {
  it('a failing job waiting for its pods to stop writes the same status on later passes', () => {
    const cluster = new MiniCluster(
      aJob({ backoffLimit: 0, activeDeadlineSeconds: 3 }, { 'sandbox.rollgate.dev/job-duration': '60s' }),
      planJob,
      options,
    );
    cluster.run(t0, 0, 3000, 500);
    const first = planJob(cluster.owner, cluster.pods, at(3500), options);
    const second = planJob({ ...cluster.owner, status: first.status }, cluster.pods, at(9000), options);
    expect(second.status).toEqual(first.status);
  });
});
