// Health rules for the apps/v1 workloads: Deployment, StatefulSet, DaemonSet, ReplicaSet. Each counts the
// replicas its controller reports against the spec, after checking the controller has seen the latest spec.
import {
  booleanAt,
  conditionOf,
  describeCondition,
  generationNotObserved,
  integerAt,
  stringAt,
} from '../live-fields.ts';
import type { HealthRule, ObjectHealth } from '../object-health.ts';

const HEALTHY: ObjectHealth = { status: 'Healthy', message: '' };

function progressing(message: string): ObjectHealth {
  return { status: 'Progressing', message };
}

/** Paused → Suspended; a progress deadline passed → Degraded; then new, old and available pods. */
export const deploymentHealth: HealthRule = (live) => {
  if (booleanAt(live, 'spec', 'paused') === true)
    return { status: 'Suspended', message: 'Deployment is paused' };
  const unobserved = generationNotObserved(live);
  if (unobserved !== undefined) return progressing(unobserved);
  const progress = conditionOf(live, 'Progressing');
  if (progress?.reason === 'ProgressDeadlineExceeded')
    return { status: 'Degraded', message: describeCondition(progress) };
  const wanted = integerAt(live, 'spec', 'replicas') ?? 1;
  const replicas = integerAt(live, 'status', 'replicas') ?? 0;
  const updated = integerAt(live, 'status', 'updatedReplicas') ?? 0;
  const available = integerAt(live, 'status', 'availableReplicas') ?? 0;
  if (updated < wanted) return progressing(`${updated} of ${wanted} replicas updated`);
  if (replicas > updated) return progressing(`${replicas - updated} old replicas pending termination`);
  if (available < updated) return progressing(`${available} of ${updated} updated replicas available`);
  return HEALTHY;
};

/** Ready pods, then the partition's or all pods updated, then the current revision equal to the update's. */
export const statefulSetHealth: HealthRule = (live) => {
  const unobserved = generationNotObserved(live);
  if (unobserved !== undefined) return progressing(unobserved);
  // OnDelete: pods change only when someone deletes them, so there is no roll-out to wait for.
  if (stringAt(live, 'spec', 'updateStrategy', 'type') === 'OnDelete') return HEALTHY;
  const wanted = integerAt(live, 'spec', 'replicas') ?? 1;
  const ready = integerAt(live, 'status', 'readyReplicas') ?? 0;
  const updated = integerAt(live, 'status', 'updatedReplicas') ?? 0;
  if (ready < wanted) return progressing(`${ready} of ${wanted} replicas ready`);
  const partition = integerAt(live, 'spec', 'updateStrategy', 'rollingUpdate', 'partition');
  if (partition !== undefined && partition > 0) {
    const toUpdate = Math.max(wanted - partition, 0);
    return updated < toUpdate
      ? progressing(`${updated} of ${toUpdate} replicas above partition ${partition} updated`)
      : HEALTHY;
  }
  if (updated < wanted) return progressing(`${updated} of ${wanted} replicas updated`);
  const current = stringAt(live, 'status', 'currentRevision');
  const update = stringAt(live, 'status', 'updateRevision');
  if (current !== undefined && update !== undefined && current !== update)
    return progressing(`waiting for revision ${update} to replace ${current}`);
  return HEALTHY;
};

/** Scheduled, updated and available daemon pods against the number the controller wants. */
export const daemonSetHealth: HealthRule = (live) => {
  const unobserved = generationNotObserved(live);
  if (unobserved !== undefined) return progressing(unobserved);
  if (stringAt(live, 'spec', 'updateStrategy', 'type') === 'OnDelete') return HEALTHY;
  const desired = integerAt(live, 'status', 'desiredNumberScheduled');
  if (desired === undefined) return progressing('waiting for the controller to schedule the daemon pods');
  const updated = integerAt(live, 'status', 'updatedNumberScheduled') ?? 0;
  const available = integerAt(live, 'status', 'numberAvailable') ?? 0;
  if (updated < desired) return progressing(`${updated} of ${desired} daemon pods updated`);
  if (available < desired) return progressing(`${available} of ${desired} daemon pods available`);
  return HEALTHY;
};

/** A ReplicaFailure (pods the controller cannot create) → Degraded; else available pods against the spec. */
export const replicaSetHealth: HealthRule = (live) => {
  const unobserved = generationNotObserved(live);
  if (unobserved !== undefined) return progressing(unobserved);
  const failure = conditionOf(live, 'ReplicaFailure');
  if (failure?.status === 'True') return { status: 'Degraded', message: describeCondition(failure) };
  const wanted = integerAt(live, 'spec', 'replicas') ?? 1;
  const available = integerAt(live, 'status', 'availableReplicas') ?? 0;
  if (available < wanted) return progressing(`${available} of ${wanted} replicas available`);
  return HEALTHY;
};

export const WORKLOAD_RULES: ReadonlyArray<readonly [string, HealthRule]> = [
  ['apps/Deployment', deploymentHealth],
  ['apps/StatefulSet', statefulSetHealth],
  ['apps/DaemonSet', daemonSetHealth],
  ['apps/ReplicaSet', replicaSetHealth],
];
