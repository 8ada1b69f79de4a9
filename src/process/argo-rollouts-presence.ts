// Whether the Argo Rollouts controller runs in the cluster: its leader Lease held and renewed, or its Deployment ready.
import { isNotFound, kubeCall } from '../kube/errors.ts';
import type { KubeClients } from '../kube/client.ts';
import { ArgoRolloutsRunningError, type ArgoRolloutsEvidence } from './argo-rollouts-running-error.ts';

/** Where to look (the `controller.argoRollouts` keys); Argo's own install uses these names. */
export interface ArgoRolloutsLocation {
  namespace: string;
  leaseName: string;
  deploymentName: string;
}

/** The Lease as read (coordination.k8s.io/v1), only what the decision needs. */
export interface LeaseSeen {
  holderIdentity?: string | undefined;
  renewTime?: string | Date | undefined;
  leaseDurationSeconds?: number | undefined;
}

/**
 * The Lease shows a live leader: someone holds it and renewed it within its duration of `now`. A
 * leader that stopped renewing (crashed, scaled to 0) leaves an expired Lease, which is no evidence:
 * client-go's own candidates take such a Lease over after the same duration.
 */
export function leaseHeld(lease: LeaseSeen, now: Date): boolean {
  if (!lease.holderIdentity || lease.renewTime === undefined) return false;
  const renewed = new Date(lease.renewTime).getTime();
  if (Number.isNaN(renewed)) return false;
  // Argo's default lease duration (15 s) when the Lease does not say.
  const durationMs = (lease.leaseDurationSeconds ?? 15) * 1000;
  return now.getTime() < renewed + durationMs;
}

/**
 * Reads Argo Rollouts' Lease and Deployment in `location.namespace` and returns what shows it running
 * (empty: it does not run). A missing object is no evidence; any other read failure is thrown (the start
 * retries a transient one and stops on a 403, naming the RBAC to grant).
 */
export async function findArgoRolloutsController(
  clients: KubeClients,
  location: ArgoRolloutsLocation,
  now: Date,
): Promise<ArgoRolloutsEvidence[]> {
  const { namespace } = location;
  const evidence: ArgoRolloutsEvidence[] = [];
  // Read through the untyped client (the JSON as served): Rollgate keeps no typed coordination client.
  const lease = (await readOrUndefined(() =>
    kubeCall({ verb: 'get', kind: 'Lease', namespace, name: location.leaseName }, () =>
      clients.custom.getNamespacedCustomObject({
        group: 'coordination.k8s.io',
        version: 'v1',
        namespace,
        plural: 'leases',
        name: location.leaseName,
      }),
    ),
  )) as { spec?: LeaseSeen } | undefined;
  const spec = lease?.spec;
  if (spec !== undefined && leaseHeld(spec, now))
    evidence.push({
      kind: 'lease',
      namespace,
      name: location.leaseName,
      holder: spec.holderIdentity ?? '',
      renewTime: new Date(spec.renewTime as Date | string).toISOString(),
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 15,
    });
  const deployment = await readOrUndefined(() =>
    kubeCall({ verb: 'get', kind: 'Deployment', namespace, name: location.deploymentName }, () =>
      clients.apps.readNamespacedDeployment({ namespace, name: location.deploymentName }),
    ),
  );
  const ready = deployment?.status?.readyReplicas ?? 0;
  if (ready > 0)
    evidence.push({ kind: 'deployment', namespace, name: location.deploymentName, readyReplicas: ready });
  return evidence;
}

/** Throws {@link ArgoRolloutsRunningError} when the Argo Rollouts controller runs. */
export async function refuseWhileArgoRolloutsRuns(
  clients: KubeClients,
  location: ArgoRolloutsLocation,
  now: Date,
): Promise<void> {
  const evidence = await findArgoRolloutsController(clients, location, now);
  if (evidence.length > 0) throw new ArgoRolloutsRunningError(evidence);
}

async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
