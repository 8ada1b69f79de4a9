// The shape every simulated workload controller returns: pods to create and delete, status, next wake-up.

import type { KubeObject } from './kube-object.ts';

/** One controller pass: pods to create (generateName set), pod names to delete, the new status. */
export interface ControllerPlan {
  create: KubeObject[];
  delete: string[];
  status: Record<string, unknown>;
  /** The earliest moment the status would change with no write happening (e.g. a pod becomes available). */
  nextChangeAt?: Date;
}
