// What `rollgate get experiment`, `list experiments` and the dashboard show of an Experiment: a pure function of the object and its ReplicaSets.
import { drivenApiOfVersion, type DrivenGroup } from '../manifest/driven-api.ts';
import { EXPERIMENT_DEFAULTS, type Experiment } from '../manifest/experiment.ts';
import type { NodeHealth } from './rollout-tree.ts';

/** A template's ReplicaSet as read: the facts the view needs of it. */
export interface ExperimentReplicaSetFacts {
  name: string;
  /** `experiment.argoproj.io/template-name`. */
  templateName: string;
  createdAt?: string;
  desired: number;
  ready: number;
  available: number;
  images: string[];
  /** `rollgate.dev/scale-down-deadline`, once the Experiment ended. */
  scaleDownDeadline?: string;
}

/** One `spec.templates[]` with its status and its ReplicaSet. */
export interface ExperimentTemplateNode {
  name: string;
  /** The template's status as the reconciler wrote it (`Progressing` until it has one). */
  status: string;
  health: NodeHealth;
  message?: string;
  /** Desired pods (spec), then ready and available as the status counts them. */
  replicas: number;
  ready: number;
  available: number;
  replicaSet?: string;
  podTemplateHash?: string;
  images: string[];
  scaleDownDeadline?: string;
  createdAt?: string;
}

/** One `spec.analyses[]` with its AnalysisRun. */
export interface ExperimentAnalysisNode {
  name: string;
  templateName: string;
  /** The AnalysisRun's name, once created. */
  analysisRun?: string;
  /** The run's phase as the Experiment records it (`Pending` before the run exists). */
  phase: string;
  health: NodeHealth;
  message?: string;
  requiredForCompletion: boolean;
}

/** Everything `rollgate get experiment` prints; `-o view-json` prints exactly this. */
export interface ExperimentView {
  name: string;
  namespace: string;
  group: DrivenGroup;
  createdAt?: string;
  /** `status.phase`, `Pending` before the reconciler wrote one. */
  status: string;
  health: NodeHealth;
  message?: string;
  /** `spec.duration` as written, when set. */
  duration?: string;
  availableAt?: string;
  /** The Rollout whose experiment step made it, when one did. */
  rollout?: string;
  templates: ExperimentTemplateNode[];
  analyses: ExperimentAnalysisNode[];
}

/** One row of `rollgate list experiments`. */
export interface ExperimentListRow {
  namespace: string;
  name: string;
  group: DrivenGroup;
  status: string;
  health: NodeHealth;
  createdAt?: string;
  /** Templates running (status Running) of all. */
  templatesRunning: number;
  templates: number;
  /** Analyses ended Successful of all. */
  analysesSuccessful: number;
  analyses: number;
  duration?: string;
  rollout?: string;
  message?: string;
}

/** An Experiment's (and an analysis's) phase as the tree's icon and colour. */
export function phaseHealth(phase: string): NodeHealth {
  switch (phase) {
    case 'Successful':
      return 'healthy';
    case 'Failed':
    case 'Error':
      return 'degraded';
    case 'Inconclusive':
      return 'unknown';
    default:
      return 'progressing';
  }
}

function templateHealth(status: string, desired: number): NodeHealth {
  switch (status) {
    case 'Running':
      return 'healthy';
    case 'Successful':
      return desired === 0 ? 'scaledDown' : 'healthy';
    case 'Failed':
    case 'Error':
      return 'degraded';
    default:
      return 'progressing';
  }
}

function durationText(duration: Experiment['spec']['duration']): string | undefined {
  if (duration === undefined) return undefined;
  return typeof duration === 'number' ? `${duration}s` : String(duration);
}

/** The Rollout that controls the Experiment (an experiment step's), by its controller reference. */
function owningRollout(experiment: Experiment): string | undefined {
  const refs = (experiment.metadata as { ownerReferences?: Array<Record<string, unknown>> }).ownerReferences;
  const ref = (refs ?? []).find((candidate) => candidate.controller === true && candidate.kind === 'Rollout');
  return typeof ref?.name === 'string' ? ref.name : undefined;
}

/**
 * The view of one Experiment: each template with its status and the ReplicaSet that runs it (the newest
 * one the Experiment controls for that template), each analysis with its run.
 */
export function buildExperimentView(
  experiment: Experiment,
  replicaSets: readonly ExperimentReplicaSetFacts[],
): ExperimentView {
  const status = experiment.status ?? {};
  const phase = status.phase ?? 'Pending';
  const templates = experiment.spec.templates.map((template): ExperimentTemplateNode => {
    const recorded = status.templateStatuses?.find((candidate) => candidate.name === template.name);
    const rs = replicaSets
      .filter((candidate) => candidate.templateName === template.name)
      .sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''))[0];
    const desired = template.replicas ?? EXPERIMENT_DEFAULTS.replicas;
    const templateStatus = recorded?.status ?? 'Progressing';
    return {
      name: template.name,
      status: templateStatus,
      health: templateHealth(templateStatus, rs?.desired ?? desired),
      ...(recorded?.message !== undefined && recorded.message !== '' && { message: recorded.message }),
      replicas: desired,
      // The ReplicaSet as read is newer than the status the last pass wrote (a scale-down after the end).
      ready: rs?.ready ?? recorded?.readyReplicas ?? 0,
      available: rs?.available ?? recorded?.availableReplicas ?? 0,
      ...(rs !== undefined && { replicaSet: rs.name, images: rs.images }),
      ...(rs === undefined && {
        images: (template.template.spec?.containers ?? [])
          .map((container) => container.image)
          .filter((image): image is string => typeof image === 'string'),
      }),
      ...(recorded?.podTemplateHash !== undefined && { podTemplateHash: recorded.podTemplateHash }),
      ...(rs?.scaleDownDeadline !== undefined && { scaleDownDeadline: rs.scaleDownDeadline }),
      ...(rs?.createdAt !== undefined && { createdAt: rs.createdAt }),
    } as ExperimentTemplateNode;
  });
  const analyses = (experiment.spec.analyses ?? []).map((analysis): ExperimentAnalysisNode => {
    const recorded = status.analysisRuns?.find((candidate) => candidate.name === analysis.name);
    const analysisPhase = recorded?.phase || 'Pending';
    return {
      name: analysis.name,
      templateName: analysis.templateName,
      ...(recorded?.analysisRun !== undefined &&
        recorded.analysisRun !== '' && { analysisRun: recorded.analysisRun }),
      phase: analysisPhase,
      health: phaseHealth(analysisPhase),
      ...(recorded?.message !== undefined && recorded.message !== '' && { message: recorded.message }),
      requiredForCompletion: analysis.requiredForCompletion === true,
    };
  });
  const duration = durationText(experiment.spec.duration);
  const rollout = owningRollout(experiment);
  return {
    name: experiment.metadata.name ?? '',
    namespace: experiment.metadata.namespace ?? 'default',
    group: drivenApiOfVersion(experiment.apiVersion).group,
    ...(experiment.metadata.creationTimestamp !== undefined && {
      createdAt: String(experiment.metadata.creationTimestamp),
    }),
    status: phase,
    health: phaseHealth(phase),
    ...(status.message !== undefined && status.message !== '' && { message: status.message }),
    ...(duration !== undefined && { duration }),
    ...(status.availableAt !== undefined && { availableAt: status.availableAt }),
    ...(rollout !== undefined && { rollout }),
    templates,
    analyses,
  };
}

/** The row of `list experiments` (and the dashboard's list), from the view. */
export function experimentListRow(view: ExperimentView): ExperimentListRow {
  return {
    namespace: view.namespace,
    name: view.name,
    group: view.group,
    status: view.status,
    health: view.health,
    ...(view.createdAt !== undefined && { createdAt: view.createdAt }),
    templatesRunning: view.templates.filter((template) => template.status === 'Running').length,
    templates: view.templates.length,
    analysesSuccessful: view.analyses.filter((analysis) => analysis.phase === 'Successful').length,
    analyses: view.analyses.length,
    ...(view.duration !== undefined && { duration: view.duration }),
    ...(view.rollout !== undefined && { rollout: view.rollout }),
    ...(view.message !== undefined && { message: view.message }),
  };
}

/** What {@link currentStepExperimentName} needs of a Rollout. */
export interface RolloutAtStep {
  metadata: { name?: string };
  spec: { strategy: { canary?: { steps?: ReadonlyArray<{ experiment?: unknown }> } } };
  status?: { currentStepIndex?: number; currentPodHash?: string };
}

/**
 * The Experiment of the Rollout's current step, when that step is an `experiment` step and its Experiment
 * exists among those the Rollout controls: named `<rollout>-<canary hash>-<revision>-<step index>` (the
 * revision is not in the Rollout's status, so the name is matched around it).
 */
export function currentStepExperimentName(
  rollout: RolloutAtStep,
  experiments: ReadonlyArray<{ name: string }>,
): string | undefined {
  const index = rollout.status?.currentStepIndex;
  const hash = rollout.status?.currentPodHash;
  if (index === undefined || hash === undefined) return undefined;
  if (rollout.spec.strategy.canary?.steps?.[index]?.experiment === undefined) return undefined;
  const prefix = `${rollout.metadata.name ?? ''}-${hash}-`;
  const suffix = `-${index}`;
  return experiments.find(
    (experiment) =>
      experiment.name.startsWith(prefix) &&
      experiment.name.endsWith(suffix) &&
      /^\d+$/.test(experiment.name.slice(prefix.length, experiment.name.length - suffix.length)),
  )?.name;
}
