// The reconcile key: which rollout a job, a read or a handover of written versions is about.

/** The namespace and name of one rollout: the reconcile key. */
export interface RolloutKey {
  namespace: string;
  name: string;
}
