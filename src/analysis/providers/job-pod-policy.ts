// What a job metric's pod may ask for: Rollgate creates the Job, so the pod must not borrow privileges its author lacks.

/** Options for {@link jobPodRefusal}. */
export interface JobPodPolicy {
  /** ServiceAccounts the pod may name besides `default` (`analysis.jobServiceAccounts`). */
  serviceAccounts: readonly string[];
}

// Capabilities a container may add: none that widen what it can do to the node or other pods.
const HARMLESS_CAPABILITIES = new Set(['NET_BIND_SERVICE']);

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Why the Job spec may not run as a metric, or undefined when it may. Whoever may edit an
 * AnalysisTemplate (`rollgate-edit`) may not create pods, yet Rollgate creates this Job with its own
 * rights; so the pod may run only as the namespace's `default` ServiceAccount (or one the operator
 * allowed), not in the node's namespaces (hostNetwork, hostPID, hostIPC), not privileged or with added
 * capabilities, and without hostPath volumes or host ports. Reads any shape without throwing.
 */
export function jobPodRefusal(jobSpec: unknown, policy: JobPodPolicy): string | undefined {
  const pod = record(record(record(jobSpec).template).spec);
  const account = pod.serviceAccountName ?? pod.serviceAccount;
  if (account !== undefined && account !== 'default' && !policy.serviceAccounts.includes(String(account))) {
    return `the pod names serviceAccountName ${JSON.stringify(String(account).slice(0, 253))}: a job metric runs as the namespace's default ServiceAccount unless analysis.jobServiceAccounts allows another`;
  }
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (pod[field] === true) return `the pod sets ${field}: a job metric may not share the node's namespaces`;
  }
  for (const volume of list(pod.volumes)) {
    if (record(volume).hostPath !== undefined)
      return `volume ${JSON.stringify(String(record(volume).name ?? '')).slice(0, 80)} is a hostPath: a job metric may not mount the node's files`;
  }
  const containers = [...list(pod.initContainers), ...list(pod.containers), ...list(pod.ephemeralContainers)];
  for (const item of containers) {
    const container = record(item);
    const name = JSON.stringify(String(container.name ?? '').slice(0, 63));
    const security = record(container.securityContext);
    if (security.privileged === true) return `container ${name} is privileged`;
    const added = list(record(security.capabilities).add).map(String);
    const wide = added.find((c) => !HARMLESS_CAPABILITIES.has(c.toUpperCase().replace(/^CAP_/, '')));
    if (wide !== undefined) return `container ${name} adds capability ${JSON.stringify(wide.slice(0, 32))}`;
    if (list(container.ports).some((port) => record(port).hostPort !== undefined))
      return `container ${name} asks for a hostPort`;
  }
  return undefined;
}
