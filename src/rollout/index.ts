// The rollout module's public surface: the pure canary planner and the contract the executor builds on.
export type {
  ObservedState,
  ObservedReplicaSet,
  ObservedPod,
  ObservedContainer,
  ObservedService,
  ObservedAnalysisRun,
  ObservedAnalysisRunPhase,
} from './observed-state.ts';
export type {
  RolloutAction,
  CreateReplicaSetAction,
  ScaleReplicaSetAction,
  DeleteReplicaSetAction,
  SetTrafficWeightsAction,
  PatchServiceSelectorAction,
  CreateAnalysisRunAction,
  AnalysisRunArgumentValue,
  TerminateAnalysisRunAction,
  DeleteAnalysisRunAction,
  EmitEventAction,
} from './rollout-action.ts';
export {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  ROLLOUT_NAME_LABEL,
  ANALYSIS_TYPE_LABEL,
  STEP_INDEX_LABEL,
} from './rollout-action.ts';
export type { RolloutPlan, PlannedRolloutStatus, ProgressWindow } from './rollout-plan.ts';
export { podTemplateHash, canonicalJson } from './pod-template-hash.ts';
