// The flags of every command that talks to a cluster: which kubeconfig, which of its contexts, which namespace.
/** What -n, --context and --kubeconfig parse to; connectKube takes it as it is. */
export interface KubeFlags {
  namespace?: string;
  kubeconfig?: string;
  context?: string;
}

export const NAMESPACE_FLAG = '-n, --namespace <ns>';
export const NAMESPACE_HELP = 'namespace (default: the context namespace)';
export const KUBECONFIG_FLAG = '--kubeconfig <file>';
export const KUBECONFIG_HELP = 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)';
export const CONTEXT_FLAG = '--context <name>';
export const CONTEXT_HELP = "the kubeconfig context to use (default: the kubeconfig's current context)";
