// Blue-green: strategy.blueGreen.antiAffinity, written into the new ReplicaSet's pod spec (as Argo injects it).
import { POD_TEMPLATE_HASH_LABEL, type CreateReplicaSetAction } from '../rollout-action.ts';
import type { Pass } from '../pass/pass.ts';
import { blueGreenOf } from './blue-green-view.ts';

const HOSTNAME_TOPOLOGY = 'kubernetes.io/hostname';

interface PodAffinityTerm {
  labelSelector: { matchExpressions: Array<{ key: string; operator: 'In'; values: string[] }> };
  namespaces?: string[];
  topologyKey: string;
}

type PodSpecWithAffinity = {
  affinity?: {
    podAntiAffinity?: {
      preferredDuringSchedulingIgnoredDuringExecution?: Array<{
        weight: number;
        podAffinityTerm: PodAffinityTerm;
      }>;
      requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    };
  };
};

/**
 * The create with the anti-affinity rule added: the new revision's pods avoid the nodes running the stable's
 * (pods with its pod-template hash), preferred with the given weight or required. The template's own
 * affinity is kept and the rule appended; the pod-template hash is of the spec's template, so it does not
 * change. Without antiAffinity, or without a stable to keep away from, the create is returned as is.
 */
export function withAntiAffinity(pass: Pass, create: CreateReplicaSetAction): CreateReplicaSetAction {
  const antiAffinity = blueGreenOf(pass).antiAffinity;
  const stableHash = pass.revision.stableHash;
  if (antiAffinity === undefined || stableHash === undefined || stableHash === pass.revision.hash)
    return create;
  const namespace = pass.context.rollout.metadata.namespace;
  const term: PodAffinityTerm = {
    labelSelector: {
      matchExpressions: [{ key: POD_TEMPLATE_HASH_LABEL, operator: 'In', values: [stableHash] }],
    },
    ...(namespace !== undefined ? { namespaces: [namespace] } : {}),
    topologyKey: HOSTNAME_TOPOLOGY,
  };
  const template = structuredClone(create.template) as { spec?: PodSpecWithAffinity };
  const spec: PodSpecWithAffinity = template.spec ?? {};
  const podAntiAffinity = { ...(spec.affinity?.podAntiAffinity ?? {}) };
  const preferred = antiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
  if (preferred !== undefined)
    podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution = [
      ...(podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? []),
      { weight: preferred.weight, podAffinityTerm: term },
    ];
  else
    podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution = [
      ...(podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution ?? []),
      term,
    ];
  return {
    ...create,
    template: { ...template, spec: { ...spec, affinity: { ...(spec.affinity ?? {}), podAntiAffinity } } },
  };
}
