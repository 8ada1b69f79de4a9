// A kubeconfig pointing at a running sandbox: as a client-node KubeConfig and as YAML for kubectl.
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

/**
 * The kubeconfig document (context `rollgate-sandbox`, namespace `default`). The server speaks plain
 * HTTP; client-node 2 refuses http:// unless insecure-skip-tls-verify is set, so it is.
 */
export function sandboxKubeconfigDocument(url: string, token?: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'rollgate-sandbox', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'rollgate-sandbox', user: token !== undefined ? { token } : {} }],
    contexts: [
      {
        name: 'rollgate-sandbox',
        context: { cluster: 'rollgate-sandbox', user: 'rollgate-sandbox', namespace: 'default' },
      },
    ],
    'current-context': 'rollgate-sandbox',
    preferences: {},
  };
}

export function sandboxKubeconfigYaml(url: string, token?: string): string {
  return stringify(sandboxKubeconfigDocument(url, token));
}

/** A client-node KubeConfig for the sandbox, ready for makeApiClient / KubernetesObjectApi.makeApiClient. */
export function sandboxKubeConfig(url: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(sandboxKubeconfigYaml(url, token));
  return kc;
}
