// strategy.canary.antiAffinity / strategy.blueGreen.antiAffinity, written into a new revision's ReplicaSet (as Argo injects it).
import type { AntiAffinity, RolloutStrategy } from '../manifest/rollout.ts';
import { POD_TEMPLATE_HASH_LABEL, type CreateReplicaSetAction } from './rollout-action.ts';

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

/** The strategy's antiAffinity, whichever strategy sets it. */
export function antiAffinityOf(strategy: RolloutStrategy): AntiAffinity | undefined {
  return strategy.canary?.antiAffinity ?? strategy.blueGreen?.antiAffinity;
}

/**
 * The create with the anti-affinity rule added: the new revision's pods avoid the nodes running the stable's
 * (pods with its pod-template hash), preferred with the given weight or required. The template's own
 * affinity is kept and the rule appended; the pod-template hash is of the spec's template, so it does not
 * change. Without antiAffinity, or without a stable to keep away from (a first revision, or the stable's
 * own ReplicaSet made again), the create is returned as is. The rule stays on the ReplicaSet once it is
 * the stable, as in Argo: its old stable's pods are leaving then, and a template edit would change nothing
 * for the pods already scheduled.
 */
export function withAntiAffinity(
  create: CreateReplicaSetAction,
  antiAffinity: AntiAffinity | undefined,
  stableHash: string | undefined,
  namespace: string | undefined,
): CreateReplicaSetAction {
  if (antiAffinity === undefined || stableHash === undefined || stableHash === create.podTemplateHash)
    return create;
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
