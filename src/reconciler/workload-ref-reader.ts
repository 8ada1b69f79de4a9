// Resolves spec.workloadRef: reads the Deployment, ReplicaSet or PodTemplate and puts its pod template (and selector) into the Rollout the planner sees.
import type { V1Deployment, V1PodTemplate, V1ReplicaSet } from '@kubernetes/client-node';
import type { ObservedWorkload } from '../rollout/index.ts';
import type { DeclaredRollout, Rollout, WorkloadRef } from '../manifest/rollout.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { toPlainObject } from '../kube/plain-object.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { WORKLOAD_KINDS_TEXT, workloadKindOf } from '../manifest/workload-kinds.ts';

/** The Rollout with its template and selector in place, and the Deployment as read (with workloadRef). */
export interface ResolvedRollout {
  rollout: Rollout;
  workload?: ObservedWorkload;
}

/**
 * Stands in for the template while the Deployment cannot be used. Never planned from: the reader lists
 * nothing by it and the planner stops at `workload.state === 'unresolved'` before it reads the template.
 */
const NO_TEMPLATE: Rollout['spec']['template'] = { spec: { containers: [] } };

function unresolved(
  declared: DeclaredRollout,
  name: string,
  cause: 'notFound' | 'invalid',
  reason: string,
): ResolvedRollout {
  const spec = declared.spec;
  return {
    rollout: { ...declared, spec: { ...spec, template: NO_TEMPLATE, selector: spec.selector ?? {} } },
    workload: { state: 'unresolved', name, cause, reason },
  };
}

/** A workload as read: where its pod template and selector are, and what the status and planner report of it. */
interface ReadWorkload {
  template?: Rollout['spec']['template'];
  selector?: Rollout['spec']['selector'];
  resourceVersion: string;
  generation: number;
  /** spec.replicas, for a kind that has them (1 when absent, the API server's default). */
  replicas: number;
}

/** How each kind of workload-kinds.ts is read: one row a kind, never a branch in the resolve. */
const WORKLOAD_READERS: Record<
  string,
  (clients: ObjectReadClients, namespace: string, name: string) => Promise<ReadWorkload>
> = {
  'apps/v1 Deployment': async (clients, namespace, name) => {
    const deployment = toPlainObject<V1Deployment>(
      await kubeCall({ verb: 'get', kind: 'Deployment', namespace, name }, () =>
        clients.apps.readNamespacedDeployment({ namespace, name }),
      ),
    );
    return fromWorkloadSpec(deployment);
  },
  'apps/v1 ReplicaSet': async (clients, namespace, name) => {
    const replicaSet = toPlainObject<V1ReplicaSet>(
      await kubeCall({ verb: 'get', kind: 'ReplicaSet', namespace, name }, () =>
        clients.apps.readNamespacedReplicaSet({ namespace, name }),
      ),
    );
    return fromWorkloadSpec(replicaSet);
  },
  // A PodTemplate keeps its pod template at the top level (`template`) and has no selector or replicas.
  'v1 PodTemplate': async (clients, namespace, name) => {
    const podTemplate = toPlainObject<V1PodTemplate>(
      await kubeCall({ verb: 'get', kind: 'PodTemplate', namespace, name }, () =>
        clients.core.readNamespacedPodTemplate({ namespace, name }),
      ),
    );
    return {
      ...(podTemplate.template !== undefined && {
        template: podTemplate.template as Rollout['spec']['template'],
      }),
      resourceVersion: podTemplate.metadata?.resourceVersion ?? '',
      generation: podTemplate.metadata?.generation ?? 0,
      replicas: 0,
    };
  },
};

function fromWorkloadSpec(workload: V1Deployment | V1ReplicaSet): ReadWorkload {
  return {
    ...(workload.spec?.template !== undefined && {
      template: workload.spec.template as Rollout['spec']['template'],
    }),
    ...(workload.spec?.selector !== undefined && {
      selector: workload.spec.selector as Rollout['spec']['selector'],
    }),
    resourceVersion: workload.metadata?.resourceVersion ?? '',
    generation: workload.metadata?.generation ?? 0,
    replicas: workload.spec?.replicas ?? 1,
  };
}

/**
 * The template is the workload's (a Deployment's or ReplicaSet's `spec.template`, a PodTemplate's
 * `template`), read in the Rollout's namespace on every pass, so a change of it is a new revision like a
 * change of an inline one; the selector is the Rollout's own, or the workload's when the Rollout has none
 * (as Argo). A reference that cannot be used is reported (`unresolved`) instead of thrown: the rollout
 * waits for it and says why.
 */
export async function resolveWorkloadRef(
  clients: ObjectReadClients,
  namespace: string,
  declared: DeclaredRollout,
  ref: WorkloadRef,
): Promise<ResolvedRollout> {
  const { spec } = declared;
  const kind = workloadKindOf(ref.apiVersion, ref.kind);
  const readWorkload = kind && WORKLOAD_READERS[`${kind.apiVersion} ${kind.kind}`];
  if (kind === undefined || readWorkload === undefined)
    return unresolved(
      declared,
      ref.name,
      'invalid',
      `workloadRef ${ref.apiVersion} ${ref.kind} ${ref.name} is not supported: only ${WORKLOAD_KINDS_TEXT}`,
    );
  if (spec.template !== undefined)
    return unresolved(
      declared,
      ref.name,
      'invalid',
      `spec.template and spec.workloadRef are both set: remove the template, it is read from the ${kind.kind}`,
    );
  let workload: ReadWorkload;
  try {
    workload = await readWorkload(clients, namespace, ref.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return unresolved(
      declared,
      ref.name,
      'notFound',
      `workloadRef not found: ${kind.kind} "${ref.name}" does not exist in namespace "${namespace}"; the rollout waits for it`,
    );
  }
  const template = workload.template;
  const selector = spec.selector ?? workload.selector;
  if (template?.spec?.containers === undefined || selector === undefined)
    return unresolved(
      declared,
      ref.name,
      'invalid',
      kind.hasSelector
        ? `${kind.kind} "${ref.name}" has no pod template or selector`
        : `${kind.kind} "${ref.name}" has no pod template, or the Rollout no spec.selector (a ${kind.kind} has none)`,
    );
  return {
    rollout: { ...declared, spec: { ...spec, template, selector } },
    workload: {
      state: 'resolved',
      kind: kind.kind,
      name: ref.name,
      resourceVersion: workload.resourceVersion,
      generation: workload.generation,
      replicas: workload.replicas,
    },
  };
}
