// The kinds `spec.workloadRef` may name, as Argo Rollouts reads them: where each keeps its pod template and selector, and what may be scaled.

/** One kind a Rollout may read its pod template from. */
export interface WorkloadKind {
  apiVersion: string;
  kind: string;
  /** It carries a selector (`spec.selector`) that stands in for a Rollout without one; a PodTemplate has none. */
  hasSelector: boolean;
  /**
   * `workloadRef.scaleDown` applies: the Rollout takes its pods over. Argo scales Deployments only (it looks
   * up a Deployment of the reference's name whatever the kind), so only a Deployment is scaled here.
   */
  scalesDown: boolean;
}

/** Argo's table (its rollout/templateref.go): a Deployment's or ReplicaSet's `spec.template`, a PodTemplate's `template`. */
export const WORKLOAD_KINDS: readonly WorkloadKind[] = [
  { apiVersion: 'apps/v1', kind: 'Deployment', hasSelector: true, scalesDown: true },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', hasSelector: true, scalesDown: false },
  { apiVersion: 'v1', kind: 'PodTemplate', hasSelector: false, scalesDown: false },
];

/** The row of `apiVersion` / `kind`, or undefined for a kind no Rollout reads from. */
export function workloadKindOf(apiVersion: string, kind: string): WorkloadKind | undefined {
  return WORKLOAD_KINDS.find((row) => row.apiVersion === apiVersion && row.kind === kind);
}

/** `apps/v1 Deployment, apps/v1 ReplicaSet or v1 PodTemplate`, for messages. */
export const WORKLOAD_KINDS_TEXT = WORKLOAD_KINDS.map((row) => `${row.apiVersion} ${row.kind}`)
  .join(', ')
  .replace(/, ([^,]*)$/, ' or $1');
