// The job metric provider's JobRunner over the real Kubernetes client (batch/v1 Jobs owned by their AnalysisRun).
import type { V1Job } from '@kubernetes/client-node';
import type { JobManifest, JobOwner, JobRunStatus, JobRunner } from '../analysis/providers/job-runner.ts';
import type { KubeClients } from '../kube/client.ts';
import { FIELD_MANAGER } from '../kube/client.ts';
import { isNotFound, kubeCall, KubeApiError } from '../kube/errors.ts';

/** True when a Job condition of `type` holds. */
function hasCondition(job: V1Job, type: string): boolean {
  return (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/**
 * How a Job ended, read from its status: a `Failed` condition → Failed; a `Complete` condition (or any
 * succeeded pod when no condition is set yet) → Succeeded; otherwise Running.
 */
export function jobRunStatus(job: V1Job): JobRunStatus {
  if (hasCondition(job, 'Failed')) return 'Failed';
  if (hasCondition(job, 'Complete') || (job.status?.succeeded ?? 0) > 0) return 'Succeeded';
  return 'Running';
}

/**
 * A {@link JobRunner} on the cluster's batch/v1 API. `create` is idempotent (an existing Job of that
 * name, 409 AlreadyExists, counts as created) and makes the AnalysisRun the Job's controller owner so
 * the Job is garbage-collected with the run; `delete` uses propagationPolicy Background so the Job's
 * pods go too, and a missing Job is not an error. API failures are Rollgate's typed kube errors.
 */
export function createKubeJobRunner(clients: KubeClients): JobRunner {
  return {
    async create(namespace: string, job: JobManifest, owner: JobOwner): Promise<string> {
      const body: V1Job = {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          ...job.metadata,
          namespace,
          ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }],
        },
        spec: job.spec as unknown as V1Job['spec'],
      };
      try {
        await kubeCall({ verb: 'create', kind: 'Job', namespace, name: job.metadata.name }, () =>
          clients.batch.createNamespacedJob({ namespace, body, fieldManager: FIELD_MANAGER }),
        );
      } catch (err) {
        // AlreadyExists: a retried measurement finds the Job it made before.
        if (err instanceof KubeApiError && err.code === 'kube.conflict') return job.metadata.name;
        throw err;
      }
      return job.metadata.name;
    },
    async status(namespace: string, name: string): Promise<JobRunStatus> {
      const job = await kubeCall({ verb: 'get', kind: 'Job', namespace, name }, () =>
        clients.batch.readNamespacedJob({ namespace, name }),
      );
      return jobRunStatus(job);
    },
    async delete(namespace: string, name: string): Promise<void> {
      try {
        await kubeCall({ verb: 'delete', kind: 'Job', namespace, name }, () =>
          clients.batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' }),
        );
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
    },
  };
}
