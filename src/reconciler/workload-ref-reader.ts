// Resolves spec.workloadRef: reads the Deployment and puts its pod template (and selector) into the Rollout the planner sees.
import type { V1Deployment } from '@kubernetes/client-node';
import type { ObservedWorkload } from '../rollout/index.ts';
import type { DeclaredRollout, Rollout, WorkloadRef } from '../manifest/rollout.ts';
import { toPlainObject, type KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';

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

/**
 * The template is the Deployment's `spec.template`, read in the Rollout's namespace on every pass,
 * so a change of the Deployment's template is a new revision like a change of an inline one; the selector
 * is the Rollout's own, or the Deployment's when the Rollout has none (as Argo). A reference that cannot
 * be used is reported (`unresolved`) instead of thrown: the rollout waits for it and says why.
 */
export async function resolveWorkloadRef(
  clients: KubeClients,
  namespace: string,
  declared: DeclaredRollout,
  ref: WorkloadRef,
): Promise<ResolvedRollout> {
  const { spec } = declared;
  if (ref.apiVersion !== 'apps/v1' || ref.kind !== 'Deployment')
    return unresolved(
      declared,
      ref.name,
      'invalid',
      `workloadRef ${ref.apiVersion} ${ref.kind} ${ref.name} is not supported: only apps/v1 Deployment`,
    );
  if (spec.template !== undefined)
    return unresolved(
      declared,
      ref.name,
      'invalid',
      'spec.template and spec.workloadRef are both set: remove the template, it is read from the Deployment',
    );
  let deployment: V1Deployment;
  try {
    deployment = toPlainObject<V1Deployment>(
      await kubeCall({ verb: 'get', kind: 'Deployment', namespace, name: ref.name }, () =>
        clients.apps.readNamespacedDeployment({ namespace, name: ref.name }),
      ),
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return unresolved(
      declared,
      ref.name,
      'notFound',
      `workloadRef not found: Deployment "${ref.name}" does not exist in namespace "${namespace}"; the rollout waits for it`,
    );
  }
  const template = deployment.spec?.template as Rollout['spec']['template'] | undefined;
  const selector = spec.selector ?? (deployment.spec?.selector as Rollout['spec']['selector'] | undefined);
  if (template?.spec?.containers === undefined || selector === undefined)
    return unresolved(
      declared,
      ref.name,
      'invalid',
      `Deployment "${ref.name}" has no pod template or selector`,
    );
  return {
    rollout: { ...declared, spec: { ...spec, template, selector } },
    workload: {
      state: 'resolved',
      name: ref.name,
      resourceVersion: deployment.metadata?.resourceVersion ?? '',
      generation: deployment.metadata?.generation ?? 0,
      replicas: deployment.spec?.replicas ?? 1,
    },
  };
}
