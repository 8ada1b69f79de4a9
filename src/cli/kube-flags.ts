// The flags of every command that talks to a cluster: which kubeconfig, which namespace.

/** What -n and --kubeconfig parse to; connectKube takes it as it is. */
export interface KubeFlags {
  namespace?: string;
  kubeconfig?: string;
}

export const NAMESPACE_FLAG = '-n, --namespace <ns>';
export const NAMESPACE_HELP = 'namespace (default: the context namespace)';
export const KUBECONFIG_FLAG = '--kubeconfig <file>';
export const KUBECONFIG_HELP = 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)';
