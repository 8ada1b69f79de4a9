// Public surface of the sandbox's pure controllers and kubelet: what the sandbox server wires in.

export type { KubeObject, ObjectMeta, OwnerReference, ManagedFieldsEntry } from './kube-object.ts';
export { isPlainObject } from './kube-object.ts';
export type { ControllerOptions } from './controller-options.ts';
export { defaultControllerOptions, isMissingImage, normalizeImage } from './controller-options.ts';
export type { ControllerPlan } from './controller-plan.ts';
export { planReplicaSet, podFromTemplate, compareForDeletion } from './replica-set-controller.ts';
export { planJob, jobPodFailureBackOffMs } from './job-controller.ts';
export type { DisruptionBudgetCounts, DisruptionBudgetPlan } from './disruption-budget.ts';
export {
  planDisruptionBudget,
  budgetSelects,
  evictionBudgetSelects,
  scaledIntOrPercent,
  withDisruptionAllowedCondition,
  DisruptionBudgetSpecError,
  DISRUPTED_POD_TIMEOUT_MS,
} from './disruption-budget.ts';
export type { KubeletResult } from './kubelet-status.ts';
export { kubeletStatus, kubeletBackOffMs, sandboxNodeName } from './kubelet-status.ts';
export {
  behaviorAnnotation,
  readyAfterAnnotation,
  jobResultAnnotation,
  jobDurationAnnotation,
  podBehaviors,
  podBehavior,
} from './pod-annotations.ts';
export type { PodBehavior } from './pod-annotations.ts';
export { isPodReady, isPodActive, isPodAvailable, podPhase } from './pod-readiness.ts';
export { formatKubeTime, parseKubeTime, formatGoDuration, parseDurationMs } from './kube-time.ts';
