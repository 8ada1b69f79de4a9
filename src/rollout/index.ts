// The rollout module's public surface: the pure canary planner and the contract the executor builds on.
export type {
  ObservedState,
  ObservedReplicaSet,
  ObservedPod,
  ObservedContainer,
  ObservedService,
  ObservedAnalysisRun,
  ObservedRolloutExperiment,
  ObservedAnalysisRunPhase,
  ObservedWorkload,
} from './observed-state.ts';
export type {
  RolloutAction,
  CreateReplicaSetAction,
  ScaleReplicaSetAction,
  DeleteReplicaSetAction,
  SetTrafficWeightsAction,
  ReassertTrafficWeightsAction,
  SetHeaderRouteAction,
  SetMirrorRouteAction,
  PatchServiceSelectorAction,
  CreateAnalysisRunAction,
  AnalysisRunArgumentValue,
  TerminateAnalysisRunAction,
  CreateExperimentAction,
  TerminateExperimentAction,
  DeleteAnalysisRunAction,
  EvictPodAction,
  ScaleDeploymentAction,
  SetReplicaSetPodMetadataAction,
  PatchPodMetadataAction,
  PodMetadataChange,
  EmitEventAction,
} from './rollout-action.ts';
export { EPHEMERAL_METADATA_ANNOTATION } from './replica-set-template.ts';
export {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  ROLLOUT_NAME_LABEL,
  ANALYSIS_TYPE_LABEL,
  STEP_INDEX_LABEL,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
} from './rollout-action.ts';
export type {
  RolloutPlan,
  PlannedRolloutStatus,
  ProgressWindow,
  TrafficRouterError,
  ManagedRouteRecord,
} from './rollout-plan.ts';
export { podTemplateHash, canonicalJson } from './pod-template-hash.ts';
export { sameJson } from './same-json.ts';
export { planRollout } from './plan-rollout.ts';
export { revisionHashOf, revisionNumberOf } from './plan-revision.ts';
export {
  planRestart,
  podsToRestart,
  RESTART_RECHECK_MS,
  type RestartInput,
  type RestartPlan,
} from './plan-restart.ts';
export {
  canaryReplicaCounts,
  resolveReplicaBudget,
  type CanaryReplicaCounts,
  type CanaryReplicaCountsInput,
  type ReplicaBudget,
  type ReplicaSetCount,
  type OtherReplicaSetCount,
} from './canary-replica-counts.ts';
export { setCondition, removeCondition } from './rollout-conditions.ts';
export type { DesiredCondition } from './rollout-conditions.ts';
export { INCONCLUSIVE_ANALYSIS_RUN } from './plan-steps.ts';
export { parseDeadline } from './plan-scale-down.ts';
export { InvalidSpecError } from './invalid-spec-error.ts';
export { InvalidAnnotationValueError } from './plan-scale-down.ts';
