// The analysis job provider's JobRunner, implemented with the real batch/v1 client.
import type { V1Job } from '@kubernetes/client-node';
import type { JobManifest, JobOwner, JobRunStatus, JobRunner } from '../analysis/providers/job-runner.ts';
import { FIELD_MANAGER, type KubeClients } from './client.ts';
import { isNotFound, kubeCall } from './errors.ts';

/**
 * Creates metric Jobs owned by their AnalysisRun (so they are garbage collected with it), reads their
 * state from the Job's conditions, and deletes them with their pods. `create` is idempotent: a Job
 * that already exists (409 AlreadyExists) counts as created.
 */
export class KubeJobRunner implements JobRunner {
  constructor(private readonly clients: KubeClients) {}

  async create(namespace: string, job: JobManifest, owner: JobOwner): Promise<string> {
    const body: V1Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        ...job.metadata,
        namespace,
        ownerReferences: [
          {
            apiVersion: owner.apiVersion,
            kind: owner.kind,
            name: owner.name,
            uid: owner.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: job.spec as unknown as V1Job['spec'],
    };
    try {
      await kubeCall({ verb: 'create', kind: 'Job', namespace, name: job.metadata.name }, () =>
        this.clients.batch.createNamespacedJob({ namespace, body, fieldManager: FIELD_MANAGER }),
      );
    } catch (err) {
      if ((err as { code?: string }).code !== 'kube.conflict') throw err;
    }
    return job.metadata.name;
  }

  async status(namespace: string, name: string): Promise<JobRunStatus> {
    const job = await kubeCall({ verb: 'get', kind: 'Job', namespace, name }, () =>
      this.clients.batch.readNamespacedJob({ namespace, name }),
    );
    const conditions = job.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Failed' && c.status === 'True')) return 'Failed';
    if (
      conditions.some((c) => c.type === 'Complete' && c.status === 'True') ||
      (job.status?.succeeded ?? 0) > 0
    )
      return 'Succeeded';
    return 'Running';
  }

  async delete(namespace: string, name: string): Promise<void> {
    try {
      await kubeCall({ verb: 'delete', kind: 'Job', namespace, name }, () =>
        this.clients.batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
