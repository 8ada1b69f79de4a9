// What the fleet controller observed of a fleet's Rollout in one cluster: the planner's input.

/** The Rollout's phase as its status says (Argo's words). */
export type ObservedRolloutPhase = 'Healthy' | 'Progressing' | 'Paused' | 'Degraded';

export interface ObservedClusterRollout {
  cluster: string;
  /** False when the cluster could not be read (its state is then Unknown, never a stop). */
  reachable: boolean;
  /** Whether the cluster has the fleet's Rollout (from `spec.rollout.path`). */
  present: boolean;
  /** The Git commit the Rollout was applied from (annotation rollgate.dev/commit). */
  revision?: string;
  phase?: ObservedRolloutPhase;
  /** The canary step index (0-based, status.currentStepIndex) and the number of steps. */
  stepIndex?: number;
  stepCount?: number;
  /** status.abort: the canary was aborted (by analysis, deadline or a person). */
  aborted?: boolean;
  /** The Rollout's status message (why it aborted, what it waits for). */
  message?: string;
  /** When reachable is false: why. */
  error?: string;
}
