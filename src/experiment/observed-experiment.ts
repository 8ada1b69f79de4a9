// What the shell read from the cluster for one Experiment: the planner's only view of the world.
import type { AnalysisPhase } from '../manifest/analysis.ts';
import type { ResolvedTemplate } from '../analysis/nested-templates.ts';

/** A ReplicaSet the Experiment controls, claimed by its template-name annotation. */
export interface ObservedTemplateReplicaSet {
  name: string;
  /** The `experiment.argoproj.io/template-name` annotation. */
  templateName: string;
  resourceVersion: string;
  podTemplateHash: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** spec.replicas. */
  replicas: number;
  status: { replicas: number; readyReplicas: number; availableReplicas: number };
  /** spec.template.spec.containers' ports, for a template Service. */
  ports: Array<{ name?: string; containerPort: number; protocol?: string }>;
}

/** A Service the Experiment controls. */
export interface ObservedTemplateService {
  name: string;
  templateName: string;
}

/** An AnalysisRun the Experiment created (found by name). */
export interface ObservedExperimentRun {
  name: string;
  phase?: AnalysisPhase;
  message?: string;
  terminate: boolean;
  /** An ownerReference with controller: true points at this Experiment. */
  ownedByExperiment: boolean;
}

/**
 * The templates of one `spec.analyses[]` as read from the cluster (the named one and those nested in it),
 * or why they could not be read (not found, invalid, a cycle).
 */
export type ObservedAnalysisTemplates =
  { ok: true; templates: readonly ResolvedTemplate[] } | { ok: false; message: string };

export interface ObservedExperiment {
  replicaSets: readonly ObservedTemplateReplicaSet[];
  services: readonly ObservedTemplateService[];
  analysisRuns: readonly ObservedExperimentRun[];
  /** By analysis name; an analysis missing here is treated as templates not found. */
  analysisTemplates: Readonly<Record<string, ObservedAnalysisTemplates>>;
}
