// The Experiment planner's public face.
export type * from './experiment-action.ts';
export type * from './observed-experiment.ts';
export { planExperiment, EXPERIMENT_PODS_RESYNC_MS, type ExperimentPlan } from './plan-experiment.ts';
export { experimentRunName } from './reconcile-analyses.ts';
export { templateReplicaSetName, templateHash } from './template-replica-set.ts';
export {
  isCompletedPhase as isCompletedExperimentPhase,
  isTerminating as isExperimentTerminating,
} from './experiment-lifecycle.ts';
