// The Kubernetes Job operations the job metric provider needs, injected so src/analysis does no Kubernetes I/O.

/** The state of a Job as the job provider reads it. */
export type JobRunStatus = 'Running' | 'Succeeded' | 'Failed';

/** The run a Job belongs to: it becomes the Job's controller ownerReference, so the Job dies with the run. */
export interface JobOwner {
  apiVersion: string;
  kind: 'AnalysisRun';
  name: string;
  uid: string;
}

/** A batch/v1 Job to create: metadata (name, labels, annotations) and the metric's JobSpec. */
export interface JobManifest {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

/**
 * Implemented by the kube module with the real client (and by tests with a fake).
 * - `create` must be idempotent: an existing Job of that name counts as created (409 AlreadyExists).
 * - `status`: Succeeded when the Job has a Complete condition (or succeeded > 0), Failed when it has a
 *   Failed condition, else Running. A missing Job should throw.
 * - `delete` removes the Job and its pods (propagationPolicy Background); a missing Job is not an error.
 */
export interface JobRunner {
  create(namespace: string, job: JobManifest, owner: JobOwner): Promise<string>;
  status(namespace: string, name: string): Promise<JobRunStatus>;
  delete(namespace: string, name: string): Promise<void>;
}
