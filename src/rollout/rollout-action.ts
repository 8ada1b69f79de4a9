// The planner's output: plain, serializable actions with absolute targets, safe to execute twice.
import type { SetHeaderRoute, SetMirrorRoute } from '../manifest/rollout.ts';

/** Label that ties a ReplicaSet, its selector and its pods to one pod template (as Argo Rollouts). */
export const POD_TEMPLATE_HASH_LABEL = 'rollouts-pod-template-hash';
/** Annotation on an old ReplicaSet: when it may be scaled to 0 (RFC 3339). Never written empty. */
export const SCALE_DOWN_DEADLINE_ANNOTATION = 'rollgate.dev/scale-down-deadline';
/**
 * Annotation on each ReplicaSet (and on the Rollout, its current one's: RolloutPlan.annotations): the revision's number, counted
 * up per new revision as Argo Rollouts does, so Argo's kubectl plugin and dashboard list the same revisions.
 */
export const REVISION_ANNOTATION = 'rollout.argoproj.io/revision';
/** Annotation on a rolled-back-to ReplicaSet: the numbers it carried before, comma-separated (as Argo). */
export const REVISION_HISTORY_ANNOTATION = 'rollout.argoproj.io/revision-history';
/** Label on AnalysisRuns naming their rollout. */
export const ROLLOUT_NAME_LABEL = 'rollgate.dev/rollout';
/** Label on AnalysisRuns: 'Step' or 'Background' (values as Argo's rollout-type label). */
export const ANALYSIS_TYPE_LABEL = 'rollgate.dev/analysis-type';
/** Label on step AnalysisRuns: the step index that started them. */
export const STEP_INDEX_LABEL = 'rollgate.dev/step-index';

/**
 * Create the ReplicaSet `name` (= `<rollout>-<hash>`), owned by the rollout (ownerReference
 * controller: true, set by the executor). `labels` go on the RS, `selector` is its spec.selector,
 * `template` already carries the hash label in its metadata.labels.
 */
export interface CreateReplicaSetAction {
  kind: 'createReplicaSet';
  name: string;
  podTemplateHash: string;
  replicas: number;
  template: object;
  /** The rollout's selector (matchLabels and matchExpressions) plus the hash label, as Argo builds it. */
  selector: {
    matchLabels: Record<string, string>;
    matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
  };
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** spec.minReadySeconds of the Rollout, copied to the ReplicaSet (0 when unset). */
  minReadySeconds: number;
}

/**
 * Set spec.replicas (absolute) of an existing ReplicaSet, conditional on `resourceVersion`. `annotations`
 * are changed in the SAME write: a string sets the annotation, null removes it. Values are never empty.
 */
export interface ScaleReplicaSetAction {
  kind: 'scaleReplicaSet';
  name: string;
  resourceVersion: string;
  replicas: number;
  annotations?: Record<string, string | null>;
}

/** Delete an old, scaled-to-0 ReplicaSet beyond revisionHistoryLimit (precondition: resourceVersion). */
export interface DeleteReplicaSetAction {
  kind: 'deleteReplicaSet';
  name: string;
  resourceVersion: string;
}

/**
 * Traffic to a weighted template of the current experiment step (Argo's WeightDestination): `weight` to the
 * template's Service (the Experiment creates it; its pods carry `podTemplateHash`), taken from the stable's share.
 */
export interface ExperimentTrafficDestination {
  serviceName: string;
  podTemplateHash: string;
  weight: number;
}

/**
 * Tell the traffic router the weights: `canaryWeight`% to pods of `canaryHash`, each `additional`
 * destination its weight, the rest to `stableHash`. canaryHash is absent when there is no canary (all
 * traffic to stable); `additional` is absent when no experiment template is weighted.
 */
export interface SetTrafficWeightsAction {
  kind: 'setTrafficWeights';
  canaryWeight: number;
  stableHash: string;
  canaryHash?: string;
  additional?: ExperimentTrafficDestination[];
  /**
   * With ping-pong, the Services the weights go to in their roles after this pass (which of ping and pong
   * carries the canary); absent: canaryService and stableService.
   */
  services?: TrafficServices;
}

/** The Services a weights action weights: the canary's and the stable's. */
export interface TrafficServices {
  canaryService: string;
  stableService: string;
}

/**
 * Send the weights the status records as in force again, on a pass at rest (see planTrafficAtRest): the
 * router writes only a route object that no longer holds them, i.e. one edited outside Rollgate (drift),
 * and reports that correction as a `TrafficDriftCorrected` Event. At rest it writes nothing. Its own kind,
 * not a setTrafficWeights, because it changes nothing the planner wants: it only holds what is recorded.
 */
export interface ReassertTrafficWeightsAction {
  kind: 'reassertTrafficWeights';
  canaryWeight: number;
  stableHash: string;
  canaryHash?: string;
  /** The experiment destinations the status records (status.canary.weights.additional). */
  additional?: ExperimentTrafficDestination[];
  /** As for setTrafficWeights: the ping-pong Services in their recorded roles. */
  services?: TrafficServices;
}

/**
 * Set or remove the header route `name` (a trafficRouting.managedRoutes name): requests matching every
 * header in `match` go to the canary Service. `match` absent: remove the route (Argo's step without match).
 */
export interface SetHeaderRouteAction {
  kind: 'setHeaderRoute';
  name: string;
  match?: SetHeaderRoute['match'];
}

/**
 * Set or remove the mirror route `name`: `percentage` % (default 100) of requests matching `match` are
 * also sent to the canary Service, whose answers are dropped. `match` absent: remove the route.
 */
export interface SetMirrorRouteAction {
  kind: 'setMirrorRoute';
  name: string;
  match?: SetMirrorRoute['match'];
  percentage?: number;
}

/** Point a Service's `rollouts-pod-template-hash` selector at a pod template hash (other keys kept). */
export interface PatchServiceSelectorAction {
  kind: 'patchServiceSelector';
  service: string;
  resourceVersion: string;
  podTemplateHash: string;
}

/** One argument of an AnalysisRun; podTemplateHashValue references are already resolved into `value`. */
export interface AnalysisRunArgumentValue {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

/** Create an AnalysisRun from templates (the analysis module merges templates and runs it). */
export interface CreateAnalysisRunAction {
  kind: 'createAnalysisRun';
  name: string;
  templates: Array<{ templateName: string; clusterScope?: boolean }>;
  args: AnalysisRunArgumentValue[];
  labels: Record<string, string>;
  background: boolean;
  /** The rollout analysis's own dryRun / measurementRetention, added to the templates' (as Argo). */
  dryRun?: Array<{ metricName: string }>;
  measurementRetention?: Array<{ metricName: string; limit: number }>;
}

/** Set spec.terminate on a running AnalysisRun. */
export interface TerminateAnalysisRunAction {
  kind: 'terminateAnalysisRun';
  name: string;
}

/**
 * Create the Experiment of an experiment step, owned by the rollout (ownerReference set by the executor):
 * `spec` is the Experiment's spec, built whole by the planner.
 */
export interface CreateExperimentAction {
  kind: 'createExperiment';
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: Record<string, unknown>;
}

/** Set spec.terminate on an unfinished Experiment of the rollout (abort, promote-full, a newer revision). */
export interface TerminateExperimentAction {
  kind: 'terminateExperiment';
  name: string;
}

/** Delete an AnalysisRun (used when a promote asks for a fresh background run). */
export interface DeleteAnalysisRunAction {
  kind: 'deleteAnalysisRun';
  name: string;
}

/**
 * Evict a pod (policy/v1 Eviction, so PodDisruptionBudgets are honoured) for a restart (spec.restartAt);
 * its ReplicaSet replaces it. Conditional on `uid`. A refusal by a disruption budget is not an error: the
 * pod is tried again on a later pass.
 */
export interface EvictPodAction {
  kind: 'evictPod';
  name: string;
  uid?: string;
  podTemplateHash: string;
}

/**
 * Set spec.replicas (absolute) of the Deployment named by spec.workloadRef, conditional on the
 * `resourceVersion` it was read at: its pods are handed over to the rollout (workloadRef.scaleDown).
 */
export interface ScaleDeploymentAction {
  kind: 'scaleDeployment';
  name: string;
  resourceVersion: string;
  replicas: number;
}

/** Labels and annotations to set (a string) or remove (null); keys not named are left alone. */
export interface PodMetadataChange {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
}

/**
 * Give an existing ReplicaSet's pod template the ephemeral metadata of the role it plays now (canary or
 * stable, preview or active): `template` is merged into spec.template.metadata, and the
 * `rollout.argoproj.io/ephemeral-metadata` annotation set to `recorded` (null removes it), in one write
 * conditional on `resourceVersion`. Pods it creates from then on carry the metadata.
 */
export interface SetReplicaSetPodMetadataAction {
  kind: 'setReplicaSetPodMetadata';
  name: string;
  resourceVersion: string;
  template: PodMetadataChange;
  recorded: string | null;
}

/**
 * Change the labels and annotations of a running pod in place (the ephemeral metadata of its
 * ReplicaSet's role), without restarting it. Only the keys named are touched, so writing it twice is
 * harmless; a pod gone meanwhile is nothing to do (its ReplicaSet's template already gives its
 * replacement the metadata).
 */
export interface PatchPodMetadataAction {
  kind: 'patchPodMetadata';
  name: string;
  change: PodMetadataChange;
}

/** A Kubernetes Event on the Rollout; the executor deduplicates by reason + message. */
export interface EmitEventAction {
  kind: 'emitEvent';
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Everything the planner can ask for. The rollout's status is not an action: see {@link RolloutPlan.status}. */
export type RolloutAction =
  | CreateReplicaSetAction
  | ScaleReplicaSetAction
  | DeleteReplicaSetAction
  | SetTrafficWeightsAction
  | ReassertTrafficWeightsAction
  | SetHeaderRouteAction
  | SetMirrorRouteAction
  | PatchServiceSelectorAction
  | CreateAnalysisRunAction
  | TerminateAnalysisRunAction
  | DeleteAnalysisRunAction
  | CreateExperimentAction
  | TerminateExperimentAction
  | EvictPodAction
  | ScaleDeploymentAction
  | SetReplicaSetPodMetadataAction
  | PatchPodMetadataAction
  | EmitEventAction;
