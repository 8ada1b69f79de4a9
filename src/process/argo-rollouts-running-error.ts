// The refusal to drive argoproj.io Rollouts while the Argo Rollouts controller runs: two controllers would fight over each Rollout.
/** What showed the Argo Rollouts controller running. */
export type ArgoRolloutsEvidence =
  | {
      kind: 'lease';
      namespace: string;
      name: string;
      holder: string;
      renewTime: string;
      leaseDurationSeconds: number;
    }
  | { kind: 'deployment'; namespace: string; name: string; readyReplicas: number };

/** Where the migration from Argo Rollouts is described. */
export const MIGRATION_DOC = 'docs/migrating-from-argo-rollouts.md';

function describe(evidence: ArgoRolloutsEvidence): string {
  return evidence.kind === 'lease'
    ? `its leader-election Lease ${evidence.namespace}/${evidence.name} is held by "${evidence.holder}" and was renewed at ${evidence.renewTime} (lease ${evidence.leaseDurationSeconds}s)`
    : `its Deployment ${evidence.namespace}/${evidence.name} has ${evidence.readyReplicas} ready replica(s)`;
}

/**
 * The process is configured to drive argoproj.io (`controller.groups`) but the Argo Rollouts controller
 * runs in the cluster: a human must stop one of them. Never retried by the start.
 */
export class ArgoRolloutsRunningError extends Error {
  override readonly name = 'ArgoRolloutsRunningError';
  readonly code = 'controller.argo_rollouts_running';
  constructor(readonly evidence: readonly ArgoRolloutsEvidence[]) {
    super(
      `refusing to drive argoproj.io Rollouts (controller.groups): the Argo Rollouts controller runs in this cluster: ${evidence
        .map(describe)
        .join('; ')}. Two controllers would fight over every Rollout. Scale it to 0 first (kubectl -n ${
        evidence[0]?.namespace ?? 'argo-rollouts'
      } scale deployment argo-rollouts --replicas=0), then start Rollgate: it takes the Rollouts over as they are (${MIGRATION_DOC}); or drop argoproj.io from controller.groups`,
    );
  }
}
