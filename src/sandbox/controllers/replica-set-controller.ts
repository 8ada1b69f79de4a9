// The simulated ReplicaSet controller: pods to match spec.replicas, surplus removal, replica counts in status.

import type { ControllerOptions } from './controller-options.ts';
import type { ControllerPlan } from './controller-plan.ts';
import type { KubeObject } from './kube-object.ts';
import { isPlainObject } from './kube-object.ts';
import { parseKubeTime } from './kube-time.ts';
import {
  isPodActive,
  isPodAvailable,
  isPodReady,
  podAvailableAt,
  podPhase,
  podReadySince,
  podRestartCount,
} from './pod-readiness.ts';
import { readConditions, removeCondition, setCondition } from './status-condition.ts';

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function templateProblem(template: Record<string, unknown>): string | undefined {
  const spec = isPlainObject(template.spec) ? template.spec : undefined;
  const containers = spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) return 'spec.containers: Required value';
  for (const [index, container] of containers.entries()) {
    if (!isPlainObject(container)) return `spec.containers[${index}]: Invalid value`;
    if (typeof container.name !== 'string' || container.name === '')
      return `spec.containers[${index}].name: Required value`;
    if (typeof container.image !== 'string' || container.image === '')
      return `spec.containers[${index}].image: Required value`;
  }
  return undefined;
}

const phaseRank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * Deletion order of the real controller (simplified to one node): not-ready before ready, pending
 * before running, ready for less time before more, more restarts before fewer, newer before older.
 */
export function compareForDeletion(a: KubeObject, b: KubeObject): number {
  const readyA = isPodReady(a) ? 1 : 0;
  const readyB = isPodReady(b) ? 1 : 0;
  if (readyA !== readyB) return readyA - readyB;
  const phaseA = phaseRank[podPhase(a)] ?? 0;
  const phaseB = phaseRank[podPhase(b)] ?? 0;
  if (phaseA !== phaseB) return phaseA - phaseB;
  const sinceA = podReadySince(a) ?? 0;
  const sinceB = podReadySince(b) ?? 0;
  if (sinceA !== sinceB) return sinceB - sinceA;
  const restartsA = podRestartCount(a);
  const restartsB = podRestartCount(b);
  if (restartsA !== restartsB) return restartsB - restartsA;
  const createdA = parseKubeTime(a.metadata.creationTimestamp) ?? 0;
  const createdB = parseKubeTime(b.metadata.creationTimestamp) ?? 0;
  if (createdA !== createdB) return createdB - createdA;
  return (b.metadata.name ?? '').localeCompare(a.metadata.name ?? '');
}

function labelsMatch(pod: KubeObject, wanted: Record<string, unknown>): boolean {
  const labels = pod.metadata.labels ?? {};
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

/** A pod for the ReplicaSet, as its controller would POST it (the API server fills name and uid). */
export function podFromTemplate(
  owner: KubeObject,
  template: Record<string, unknown>,
  extraLabels: Record<string, string> = {},
  extraAnnotations: Record<string, string> = {},
): KubeObject {
  const meta = isPlainObject(template.metadata) ? template.metadata : {};
  const labels = {
    ...(isPlainObject(meta.labels) ? (meta.labels as Record<string, string>) : {}),
    ...extraLabels,
  };
  const annotations = {
    ...(isPlainObject(meta.annotations) ? (meta.annotations as Record<string, string>) : {}),
    ...extraAnnotations,
  };
  const spec = isPlainObject(template.spec) ? structuredClone(template.spec) : {};
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${owner.metadata.name ?? ''}-`,
      namespace: owner.metadata.namespace ?? 'default',
      labels,
      ownerReferences: [
        {
          apiVersion: owner.apiVersion,
          kind: owner.kind,
          name: owner.metadata.name ?? '',
          uid: owner.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  };
  if (Object.keys(annotations).length > 0) pod.metadata.annotations = annotations;
  return pod;
}

/**
 * One pass of the ReplicaSet controller over the pods it owns. Creates pods up to spec.replicas,
 * deletes the surplus (not-ready first, then newest), and reports status counted from the pods it was
 * given (as the real controller does, the counts catch up on the next pass). Pods being deleted and
 * finished pods do not count. nextChangeAt is when a Ready pod becomes available (minReadySeconds).
 */
export function planReplicaSet(
  rs: KubeObject,
  ownedPods: KubeObject[],
  now: Date,
  _options: ControllerOptions,
): ControllerPlan {
  const spec = rs.spec ?? {};
  const wanted = Math.max(0, Math.floor(numberOr(spec.replicas, 1)));
  const minReadySeconds = numberOr(spec.minReadySeconds, 0);
  const template = isPlainObject(spec.template) ? spec.template : {};
  const templateMeta = isPlainObject(template.metadata) ? template.metadata : {};
  const templateLabels = isPlainObject(templateMeta.labels) ? templateMeta.labels : {};
  const active = ownedPods.filter(isPodActive);
  const beingDeleted = rs.metadata.deletionTimestamp !== undefined;

  const create: KubeObject[] = [];
  let deleteNames: string[] = [];
  let conditions = readConditions(rs.status);
  if (!beingDeleted && active.length < wanted) {
    const problem = templateProblem(template);
    if (problem === undefined) {
      for (let index = active.length; index < wanted; index += 1) create.push(podFromTemplate(rs, template));
      conditions = removeCondition(conditions, 'ReplicaFailure');
    } else {
      conditions = setCondition(
        conditions,
        {
          type: 'ReplicaFailure',
          status: 'True',
          reason: 'FailedCreate',
          message: `Pod "${rs.metadata.name ?? ''}-" is invalid: ${problem}`,
        },
        now,
      );
    }
  } else {
    conditions = removeCondition(conditions, 'ReplicaFailure');
    if (active.length > wanted) {
      deleteNames = [...active]
        .sort(compareForDeletion)
        .slice(0, active.length - wanted)
        .map((pod) => pod.metadata.name ?? '');
    }
  }

  const ready = active.filter(isPodReady);
  const available = ready.filter((pod) => isPodAvailable(pod, minReadySeconds, now));
  const fullyLabeled = active.filter((pod) => labelsMatch(pod, templateLabels));
  const status: Record<string, unknown> = { replicas: active.length };
  if (fullyLabeled.length > 0) status.fullyLabeledReplicas = fullyLabeled.length;
  if (ready.length > 0) status.readyReplicas = ready.length;
  if (available.length > 0) status.availableReplicas = available.length;
  if (typeof rs.metadata.generation === 'number') status.observedGeneration = rs.metadata.generation;
  if (conditions.length > 0) status.conditions = conditions;

  const pendingAvailability = ready
    .filter((pod) => !isPodAvailable(pod, minReadySeconds, now))
    .map((pod) => podAvailableAt(pod, minReadySeconds))
    .filter((at): at is number => at !== undefined && at > now.getTime());
  const plan: ControllerPlan = { create, delete: deleteNames, status };
  if (pendingAvailability.length > 0) plan.nextChangeAt = new Date(Math.min(...pendingAvailability));
  return plan;
}
