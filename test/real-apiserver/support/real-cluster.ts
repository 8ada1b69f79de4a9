// The real kube-apiserver that `npm run test:real-apiserver` started: its admin clients, a fresh namespace per file.
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';

/** The control plane as the admin sees it. */
export interface RealCluster {
  /** The admin kubeconfig file (static token, system:masters). */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  clients: KubeClients;
}

/**
 * The cluster named by ROLLGATE_CONFORMANCE_KUBECONFIG. These suites are the real-server ones: without a
 * server they must fail, not pass on nothing.
 */
export function connectRealCluster(): RealCluster {
  const kubeconfigPath = process.env.ROLLGATE_CONFORMANCE_KUBECONFIG;
  if (!kubeconfigPath)
    throw new Error('ROLLGATE_CONFORMANCE_KUBECONFIG is not set (npm run test:real-apiserver sets it)');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return { kubeconfigPath, kubeConfig, clients: createKubeClients(kubeConfig) };
}

/** Creates `PREFIX-xxxxxx` and returns a function that deletes it (never failing the test on cleanup). */
export async function createTestNamespace(
  cluster: RealCluster,
  prefix: string,
): Promise<{ name: string; remove(): Promise<void> }> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await cluster.clients.core.createNamespace({ body: { metadata: { name } } });
  return {
    name,
    remove: () =>
      cluster.clients.core.deleteNamespace({ name }).then(
        () => undefined,
        () => undefined,
      ),
  };
}
