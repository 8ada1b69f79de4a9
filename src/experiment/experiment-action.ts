// What the Experiment planner asks the shell to do: plain data, each with an absolute target.
import type { AnalysisRun } from '../manifest/analysis.ts';
import type { LabelSelector } from '../manifest/kube-meta.ts';

/**
 * Create the ReplicaSet of one template, `<experiment>-<template>-<hash>`, owned by the Experiment
 * (ownerReference controller: true, set by the shell). `podTemplate` carries the hash label already.
 */
export interface CreateTemplateReplicaSetAction {
  kind: 'createReplicaSet';
  template: string;
  name: string;
  podTemplateHash: string;
  replicas: number;
  podTemplate: object;
  selector: LabelSelector;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  minReadySeconds: number;
}

/**
 * Set spec.replicas (absolute) of a template's ReplicaSet, conditional on `resourceVersion`; `annotations`
 * change in the same write (a string sets, null removes).
 */
export interface ScaleTemplateReplicaSetAction {
  kind: 'scaleReplicaSet';
  template: string;
  name: string;
  resourceVersion: string;
  replicas: number;
  annotations?: Record<string, string | null>;
}

/** One port of a template Service: a container port, as Argo copies it. */
export interface TemplateServicePort {
  name?: string;
  port: number;
  targetPort: number;
  protocol: string;
}

/** Create the Service in front of one template's pods (selector: the ReplicaSet's labels, hash included). */
export interface CreateTemplateServiceAction {
  kind: 'createService';
  template: string;
  name: string;
  selector: Record<string, string>;
  labels: Record<string, string>;
  ports: TemplateServicePort[];
}

/** Delete a template's Service once its ReplicaSet has no available pod left. */
export interface DeleteTemplateServiceAction {
  kind: 'deleteService';
  template: string;
  name: string;
}

/** Create the AnalysisRun of one `spec.analyses[]`, built whole by the planner (owner reference included). */
export interface CreateExperimentRunAction {
  kind: 'createAnalysisRun';
  analysis: string;
  name: string;
  run: AnalysisRun;
}

/** Set spec.terminate on an unfinished AnalysisRun of the Experiment. */
export interface TerminateExperimentRunAction {
  kind: 'terminateAnalysisRun';
  analysis: string;
  name: string;
}

/** A Kubernetes Event on the Experiment. */
export interface ExperimentEventAction {
  kind: 'emitEvent';
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type ExperimentAction =
  | CreateTemplateReplicaSetAction
  | ScaleTemplateReplicaSetAction
  | CreateTemplateServiceAction
  | DeleteTemplateServiceAction
  | CreateExperimentRunAction
  | TerminateExperimentRunAction
  | ExperimentEventAction;
