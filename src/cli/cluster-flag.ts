// `--cluster NAME` and `--all-clusters`: which registered cluster a command talks to, found as the processes find it.
import type { Command } from 'commander';
import type { KubeConnection } from '../kube/client.ts';
import type { KubeFlags } from './kube-flags.ts';
import { usageError } from './usage-error.ts';

export const CLUSTER_FLAG = '--cluster <name>';
export const CLUSTER_HELP =
  "a registered cluster, by name: kubernetes.clusterName (the kubeconfig's, default in-cluster), a `clusters:` context of --config, or an Argo CD cluster Secret (docs/clusters.md)";
export const CONFIG_FLAG = '--config <file>';
export const CONFIG_HELP =
  'the Rollgate configuration naming the clusters (default: $ROLLGATE_CONFIG, else the built-in defaults)';

/** What `--cluster`, `--all-clusters` and `--config` parse to. */
export interface ClusterFlags {
  cluster?: string;
  allClusters?: boolean;
  config?: string;
}

/** Adds `--cluster NAME` and `--config FILE` to a command that talks to one cluster. */
export function addClusterOptions(command: Command): Command {
  return command.option(CLUSTER_FLAG, CLUSTER_HELP).option(CONFIG_FLAG, CONFIG_HELP);
}

/** One cluster a command reaches, or why it cannot. */
export interface ReachedCluster {
  name: string;
  /** `kubernetes`, `clusters[1]`, `Secret argocd/prod`. */
  declaredBy: string;
  kube?: KubeConnection | undefined;
  /** Why there is no connection (an Invalid registration). */
  problem?: string | undefined;
}

/** Every registered cluster as a command sees it: the local one, the config's contexts, the Secrets. */
export interface ClusterDirectory {
  local: ReachedCluster & { kube: KubeConnection };
  clusters: ReachedCluster[];
  /** Why the Secrets could not be read, if they could not (they are then left out). */
  secretsProblem?: string | undefined;
}

/**
 * Reads the clusters a deployment knows, as its processes do: the local connection (from --kubeconfig,
 * --context) named `kubernetes.clusterName`, the configuration's `clusters:` contexts, then the Argo CD
 * cluster Secrets of `clusterSecrets.namespace` (default the state namespace) in the local cluster, with
 * the same parser and the same rule for names claimed twice. A Secret the user may not read is said, not
 * fatal: the other clusters stay known.
 */
export async function readClusterDirectory(flags: KubeFlags & ClusterFlags): Promise<ClusterDirectory> {
  const [{ connectKube }, { loadConfig }, { clusterSecretsNamespace }, open, { resolveRegistrations }] =
    await Promise.all([
      import('../kube/client.ts'),
      import('../config/index.ts'),
      import('../config/schema.ts'),
      import('../clusters/open-cluster-set.ts'),
      import('../clusters/cluster-registration.ts'),
    ]);
  const { connectionFromContext, connectionFromSpec } = await import('../clusters/cluster-connection.ts');
  const file = flags.config ?? process.env.ROLLGATE_CONFIG;
  const config = loadConfig(file !== undefined && file !== '' ? { file } : {});
  const localKube = connectKube(flags);
  const local = { name: config.kubernetes.clusterName, declaredBy: 'kubernetes', kube: localKube };
  let secretsProblem: string | undefined;
  const secrets: ReturnType<typeof open.secretRegistration>[] = [];
  const namespace = clusterSecretsNamespace(config);
  try {
    const listed = await open.listClusterSecrets(localKube, namespace);
    for (const secret of listed.secrets) secrets.push(open.secretRegistration(secret));
  } catch (err) {
    secretsProblem = `could not read the cluster Secrets of namespace ${namespace}: ${(err as Error).message}`;
  }
  const { active, refused } = resolveRegistrations([
    { name: local.name, origin: 'local', declaredBy: 'kubernetes', problems: [] },
    ...open.configuredRegistrations(config),
    ...secrets,
  ]);
  const clusters: ReachedCluster[] = [];
  for (const [name, registration] of active) {
    if (registration.origin === 'local') {
      clusters.push(local);
      continue;
    }
    const target = registration.target;
    try {
      const kube =
        target?.kind === 'spec'
          ? connectionFromSpec(target.spec, undefined)
          : target?.kind === 'context'
            ? connectionFromContext(target, flags.kubeconfig ?? config.kubernetes.kubeconfig, undefined)
            : undefined;
      clusters.push({ name, declaredBy: registration.declaredBy, kube });
    } catch (err) {
      clusters.push({ name, declaredBy: registration.declaredBy, problem: (err as Error).message });
    }
  }
  for (const { registration, message } of refused)
    if (!active.has(registration.name))
      clusters.push({ name: registration.name, declaredBy: registration.declaredBy, problem: message });
  clusters.sort((a, b) => (a === local ? -1 : b === local ? 1 : a.name.localeCompare(b.name)));
  return { local, clusters, secretsProblem };
}

/**
 * The connection `--cluster NAME` names (the local one without it), with `-n` applied. An unknown name or
 * an Invalid registration is a usage error (exit 2) that lists the clusters known.
 */
export async function connectNamedCluster(
  command: string,
  flags: KubeFlags & ClusterFlags,
): Promise<KubeConnection> {
  if (flags.cluster === undefined) {
    const { connectKube } = await import('../kube/client.ts');
    return connectKube(flags);
  }
  const directory = await readClusterDirectory(flags);
  const found = directory.clusters.find((cluster) => cluster.name === flags.cluster);
  if (found?.kube === undefined) {
    const known = directory.clusters.map((cluster) => cluster.name).join(', ');
    const why =
      found !== undefined
        ? `cluster "${flags.cluster}" (${found.declaredBy}) is Invalid: ${found.problem ?? 'no connection'}`
        : `unknown cluster "${flags.cluster}" (clusters: ${known})`;
    throw usageError(
      command,
      directory.secretsProblem !== undefined ? `${why}; ${directory.secretsProblem}` : why,
    );
  }
  return withNamespace(found.kube, flags.namespace);
}

/** A connection whose default namespace is `-n`'s when given. */
export function withNamespace(kube: KubeConnection, namespace: string | undefined): KubeConnection {
  return namespace === undefined ? kube : { ...kube, namespace };
}
