// Which Rollouts read their template from which Deployment: turns a Deployment change into the keys to enqueue.

/** The parts of a watched or listed Rollout this index reads. */
export interface RolloutReferenceSource {
  metadata?: { name?: string; namespace?: string };
  spec?: { workloadRef?: { kind?: string; name?: string } };
}

/**
 * An in-memory index `namespace/deployment → rollout keys`, fed by the Rollout watch and by every listing
 * of Rollouts. It is only a shortcut for wake-ups: a process that starts (or whose watch restarts)
 * enqueues every rollout anyway, so an index rebuilt from nothing loses no work.
 */
export class WorkloadReferences {
  private readonly rolloutsByDeployment = new Map<string, Set<string>>();
  private readonly deploymentByRollout = new Map<string, string>();

  /** Records (or, for a deleted Rollout or one without workloadRef, forgets) what `rollout` references. */
  note(rollout: RolloutReferenceSource, deleted = false): void {
    const { name, namespace } = rollout.metadata ?? {};
    if (!name || !namespace) return;
    const key = `${namespace}/${name}`;
    const previous = this.deploymentByRollout.get(key);
    if (previous !== undefined) {
      this.rolloutsByDeployment.get(previous)?.delete(key);
      this.deploymentByRollout.delete(key);
    }
    const ref = rollout.spec?.workloadRef;
    if (deleted || ref?.kind !== 'Deployment' || !ref.name) return;
    const deployment = `${namespace}/${ref.name}`;
    this.deploymentByRollout.set(key, deployment);
    const keys = this.rolloutsByDeployment.get(deployment) ?? new Set<string>();
    keys.add(key);
    this.rolloutsByDeployment.set(deployment, keys);
  }

  /** The keys of the Rollouts whose workloadRef names this Deployment. */
  rolloutsOf(namespace: string, deployment: string): string[] {
    return [...(this.rolloutsByDeployment.get(`${namespace}/${deployment}`) ?? [])];
  }
}
