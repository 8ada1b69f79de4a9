// The ReplicaSet that runs one Experiment template: its hash, name, labels, selector and annotations (pure).
import {
  EXPERIMENT_NAME_ANNOTATION,
  EXPERIMENT_TEMPLATE_NAME_ANNOTATION,
  type ExperimentTemplate,
} from '../manifest/experiment.ts';
import type { LabelSelector } from '../manifest/kube-meta.ts';
import { podTemplateHash, stripPodTemplateHashLabel } from '../rollout/pod-template-hash.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../rollout/rollout-action.ts';
import type { CreateTemplateReplicaSetAction } from './experiment-action.ts';

/** The name of a template's ReplicaSet: `<experiment>-<template>-<hash>`. */
export function templateReplicaSetName(experiment: string, template: string, hash: string): string {
  return `${experiment}-${template}-${hash}`;
}

/**
 * The hash of a template's ReplicaSet: of its pod template (a stray hash label removed first, as Argo
 * does) together with the Experiment's and the template's names. An experiment step runs the canary's
 * and the stable's very templates: its pods must still carry hashes of their own, so a query by hash
 * measures the Experiment's pods apart from the Rollout's (as Argo's documentation promises).
 */
export function templateHash(
  experiment: string,
  template: ExperimentTemplate,
  collisionCount?: number,
): string {
  return podTemplateHash(
    { experiment, template: template.name, pod: stripPodTemplateHashLabel(template.template) },
    collisionCount,
  );
}

/** The createReplicaSet action of `template` with `replicas` pods. */
export function templateReplicaSet(
  experiment: string,
  template: ExperimentTemplate,
  replicas: number,
  collisionCount?: number,
): CreateTemplateReplicaSetAction {
  const hash = templateHash(experiment, template, collisionCount);
  const podLabels = { ...(template.template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const selector: LabelSelector = {
    ...template.selector,
    matchLabels: { ...(template.selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash },
  };
  return {
    kind: 'createReplicaSet',
    template: template.name,
    name: templateReplicaSetName(experiment, template.name, hash),
    podTemplateHash: hash,
    replicas,
    podTemplate: {
      ...template.template,
      metadata: { ...(template.template.metadata ?? {}), labels: podLabels },
    },
    selector,
    labels: podLabels,
    annotations: {
      [EXPERIMENT_NAME_ANNOTATION]: experiment,
      [EXPERIMENT_TEMPLATE_NAME_ANNOTATION]: template.name,
    },
    minReadySeconds: template.minReadySeconds ?? 0,
  };
}
