// Sub-planner: the Experiment an experiment step creates, from the canary's and the stable's pod templates (pure).
import type { RolloutExperimentStep } from '../manifest/rollout.ts';
import type { ObservedReplicaSet } from './observed-state.ts';
import { stripPodTemplateHashLabel } from './pod-template-hash.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
  type AnalysisRunArgumentValue,
  type CreateExperimentAction,
} from './rollout-action.ts';
import type { RolloutContext } from './rollout-context.ts';

/** The Experiment of step `index`, as Argo names it: `<rollout>-<hash>-<revision>-<index>`. */
export function experimentStepName(rollout: string, hash: string, revision: number, index: number): string {
  return `${rollout}-${hash}-${revision}-${index}`;
}

/** What an experiment step's Experiment is made from. */
export interface ExperimentStepSources {
  /** The canary's pod template (the rollout's template) and hash. */
  canary: { template: object; hash: string };
  /** The stable ReplicaSet. */
  stable: ObservedReplicaSet;
  revision: number;
  index: number;
}

type PodTemplate = { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } };

/**
 * The createExperiment action of an experiment step, as Argo builds it: each template runs the canary's or
 * the stable's pod template (hash label removed: the Experiment hashes its own), with the rollout's
 * minReadySeconds, its selector (or the template's own) and the template's extra labels added to both; the
 * step's duration, analyses (podTemplateHashValue args resolved to the stable and canary hashes),
 * dryRun, measurementRetention, analysisRunMetadata and scaleDownDelaySeconds; the rollout's
 * progressDeadlineSeconds. Labelled with the rollout's labels and the canary hash, annotated with the revision.
 */
export function createExperimentAction(
  context: RolloutContext,
  step: RolloutExperimentStep,
  sources: ExperimentStepSources,
): CreateExperimentAction {
  const { spec, rollout } = context;
  const templates = step.templates.map((template) => {
    const base = stripPodTemplateHashLabel(
      template.specRef === 'canary' ? sources.canary.template : sources.stable.template,
    ) as PodTemplate;
    const extraLabels = template.metadata?.labels ?? {};
    const podTemplate = {
      ...base,
      metadata: {
        ...(base.metadata ?? {}),
        labels: { ...(base.metadata?.labels ?? {}), ...extraLabels },
        ...((base.metadata?.annotations !== undefined || template.metadata?.annotations !== undefined) && {
          annotations: { ...(base.metadata?.annotations ?? {}), ...(template.metadata?.annotations ?? {}) },
        }),
      },
    };
    const selector = template.selector ?? spec.selector;
    const { [POD_TEMPLATE_HASH_LABEL]: _hash, ...matchLabels } = selector.matchLabels ?? {};
    return {
      name: template.name,
      ...(template.replicas !== undefined && { replicas: template.replicas }),
      ...(spec.minReadySeconds !== undefined && { minReadySeconds: spec.minReadySeconds }),
      selector: { ...selector, matchLabels: { ...matchLabels, ...extraLabels } },
      template: podTemplate,
      // A weighted template needs a Service for the router to send its share to (Argo: one named after the
      // template's ReplicaSet unless service.name says otherwise).
      ...((template.service !== undefined || template.weight !== undefined) && {
        service: template.service ?? {},
      }),
    };
  });
  const hashes = { Stable: sources.stable.podTemplateHash, Latest: sources.canary.hash };
  const analyses = (step.analyses ?? []).map((analysis) => ({
    name: analysis.name,
    templateName: analysis.templateName,
    ...(analysis.clusterScope !== undefined && { clusterScope: analysis.clusterScope }),
    ...(analysis.requiredForCompletion !== undefined && {
      requiredForCompletion: analysis.requiredForCompletion,
    }),
    ...(analysis.args !== undefined && {
      args: analysis.args.map((arg): AnalysisRunArgumentValue => {
        const which = arg.valueFrom?.podTemplateHashValue;
        if (which !== undefined) return { name: arg.name, value: hashes[which] };
        return { name: arg.name, ...(arg.value !== undefined && { value: arg.value }) };
      }),
    }),
  }));
  const experimentSpec: Record<string, unknown> = {
    templates,
    ...(step.duration !== undefined && { duration: step.duration }),
    ...(rollout.spec.progressDeadlineSeconds !== undefined && {
      progressDeadlineSeconds: rollout.spec.progressDeadlineSeconds,
    }),
    ...(analyses.length > 0 && { analyses }),
    ...(step.dryRun !== undefined && { dryRun: step.dryRun }),
    ...(step.measurementRetention !== undefined && { measurementRetention: step.measurementRetention }),
    ...(step.analysisRunMetadata !== undefined && { analysisRunMetadata: step.analysisRunMetadata }),
    ...(step.scaleDownDelaySeconds !== undefined && { scaleDownDelaySeconds: step.scaleDownDelaySeconds }),
  };
  return {
    kind: 'createExperiment',
    name: experimentStepName(context.name, sources.canary.hash, sources.revision, sources.index),
    labels: { ...(rollout.metadata.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: sources.canary.hash },
    annotations: { [REVISION_ANNOTATION]: String(sources.revision) },
    spec: experimentSpec,
  };
}
