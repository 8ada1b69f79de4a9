// What the executor read from the cluster for one rollout: the planner's only view of the world.
import type { AnalysisPhase } from '../manifest/analysis.ts';
import type { Rollout } from '../manifest/rollout.ts';

/** A ReplicaSet as observed (owned by the rollout, or carrying its pod-template-hash and selector). */
export interface ObservedReplicaSet {
  name: string;
  uid: string;
  resourceVersion: string;
  /** Value of the `rollouts-pod-template-hash` label ('' when absent). */
  podTemplateHash: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** spec.replicas (0 when absent). */
  replicas: number;
  /** status counts (0 when the ReplicaSet has no status yet). */
  status: { replicas: number; readyReplicas: number; availableReplicas: number };
  /** spec.template as stored (with the hash label). */
  template: object;
  /** RFC 3339 creation time; orders revisions for revisionHistoryLimit. */
  creationTimestamp: string;
  /** An ownerReference with controller: true points at this rollout. */
  controlledByRollout: boolean;
}

/** One container of an observed pod, with the state that explains why it is not ready. */
export interface ObservedContainer {
  name: string;
  image: string;
  /** state.waiting.reason, e.g. ImagePullBackOff, CrashLoopBackOff, ErrImagePull, CreateContainerConfigError. */
  waitingReason?: string;
  waitingMessage?: string;
  /** state.terminated.reason or lastState.terminated.reason. */
  terminatedReason?: string;
  restartCount: number;
}

/** A pod of one of the rollout's ReplicaSets. */
export interface ObservedPod {
  name: string;
  podTemplateHash: string;
  phase: string;
  ready: boolean;
  containers: ObservedContainer[];
  /** metadata.uid: an eviction is conditional on it, so a replacement with the same name is never hit. */
  uid?: string;
  /** metadata.creationTimestamp (RFC 3339). A pod without one cannot be shown newer than a restart. */
  creationTimestamp?: string;
  /** metadata.labels and metadata.annotations, where they were read (ephemeral metadata is kept on them). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A Service named by strategy.canary.canaryService / stableService. */
export interface ObservedService {
  name: string;
  resourceVersion: string;
  selector: Record<string, string>;
}

/** The phases of an AnalysisRun, as Argo names them. */
export type ObservedAnalysisRunPhase = AnalysisPhase;

/** An AnalysisRun owned by the rollout (the planner names them deterministically, see {@link analysisRunName}). */
export interface ObservedAnalysisRun {
  name: string;
  phase: ObservedAnalysisRunPhase;
  message?: string;
  labels: Record<string, string>;
  /** spec.terminate is set (or the run already reached a final phase). */
  terminated: boolean;
  /** metadata.creationTimestamp (RFC 3339): orders runs for history limits. */
  creationTimestamp?: string;
}

/** An Experiment the rollout controls (an experiment step's), as the planner needs it. */
export interface ObservedRolloutExperiment {
  name: string;
  /** status.phase; undefined before the Experiment's first pass. */
  phase?: AnalysisPhase;
  message?: string;
  /** spec.terminate is set. */
  terminate: boolean;
  /** status.templateStatuses: the Service each template got (for a weighted template) and its pods' hash. */
  templateStatuses?: ObservedExperimentTemplate[];
}

/** One template of an Experiment as its status records it. */
export interface ObservedExperimentTemplate {
  name: string;
  /** The template's Service, once the Experiment created it. */
  serviceName?: string;
  podTemplateHash?: string;
}

/**
 * The Deployment named by spec.workloadRef. `resolved`: its template (and selector, when the Rollout has
 * none) is already in `ObservedState.rollout.spec`. `unresolved`: it could not be used (not found, not a
 * Deployment, a template written beside the reference); `reason` says why and the rollout waits.
 */
export type ObservedWorkload =
  | {
      state: 'resolved';
      /** The kind read (`Deployment`, `ReplicaSet`, `PodTemplate`): only a Deployment is ever scaled. */
      kind: string;
      name: string;
      resourceVersion: string;
      /** metadata.generation, reported as status.workloadObservedGeneration (as Argo). */
      generation: number;
      /** spec.replicas of the Deployment or ReplicaSet (1 when absent, the API server's default); 0 for a PodTemplate. */
      replicas: number;
    }
  | {
      state: 'unresolved';
      name: string;
      /** `notFound`: no such Deployment (yet); `invalid`: the reference itself cannot be used. */
      cause: 'notFound' | 'invalid';
      reason: string;
    };

/**
 * Everything the planner may look at. `rollout` is the live object (metadata with name, namespace,
 * uid, generation, resourceVersion; spec; status). Lists may be empty; nothing is assumed consistent.
 */
export interface ObservedState {
  rollout: Rollout;
  replicaSets: ObservedReplicaSet[];
  pods: ObservedPod[];
  services: ObservedService[];
  analysisRuns: ObservedAnalysisRun[];
  /** The Experiments of the rollout's experiment steps (absent: none read). */
  experiments?: ObservedRolloutExperiment[];
  /**
   * Pods of the rollout's ReplicaSets that are terminating (deletionTimestamp set). They are not in `pods`,
   * but they are disruptions already in flight: a restart counts them against maxUnavailable.
   */
  terminatingPods?: number;
  /** Present when spec.workloadRef is set: the referenced Deployment as read. */
  workload?: ObservedWorkload;
  /** The last traffic-router error, if the last setTrafficWeights failed. Never blocks an abort. */
  traffic?: { error?: string };
}
