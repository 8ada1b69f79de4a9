// Which Rollouts read their template from which workload (Deployment, ReplicaSet, PodTemplate): turns its change into the keys to enqueue.
import { WORKLOAD_KINDS } from '../manifest/workload-kinds.ts';

/** The parts of a watched or listed Rollout this index reads. */
export interface RolloutReferenceSource {
  metadata?: { name?: string; namespace?: string };
  spec?: { workloadRef?: { kind?: string; name?: string } };
}

/**
 * An in-memory index `kind namespace/name → rollout keys`, fed by the Rollout watch and by every listing
 * of Rollouts. It is only a shortcut for wake-ups: a process that starts (or whose watch restarts)
 * enqueues every rollout anyway, so an index rebuilt from nothing loses no work.
 */
export class WorkloadReferences {
  private readonly rolloutsByWorkload = new Map<string, Set<string>>();
  private readonly workloadByRollout = new Map<string, string>();

  /** Records (or, for a deleted Rollout or one without workloadRef, forgets) what `rollout` references. */
  note(rollout: RolloutReferenceSource, deleted = false): void {
    const { name, namespace } = rollout.metadata ?? {};
    if (!name || !namespace) return;
    const key = `${namespace}/${name}`;
    const previous = this.workloadByRollout.get(key);
    if (previous !== undefined) {
      this.rolloutsByWorkload.get(previous)?.delete(key);
      this.workloadByRollout.delete(key);
    }
    const ref = rollout.spec?.workloadRef;
    if (deleted || !ref?.name || !WORKLOAD_KINDS.some((row) => row.kind === ref.kind)) return;
    const workload = `${ref.kind} ${namespace}/${ref.name}`;
    this.workloadByRollout.set(key, workload);
    const keys = this.rolloutsByWorkload.get(workload) ?? new Set<string>();
    keys.add(key);
    this.rolloutsByWorkload.set(workload, keys);
  }

  /** The keys of the Rollouts whose workloadRef names this workload (a Deployment unless `kind` says). */
  rolloutsOf(namespace: string, name: string, kind = 'Deployment'): string[] {
    return [...(this.rolloutsByWorkload.get(`${kind} ${namespace}/${name}`) ?? [])];
  }
}
